//! The number formats a replica runs in, as the learner chooses them: FP8 weights only, FP8
//! weights and activations, and an FP8 KV cache (each a separate choice, since each changes a
//! different term of the cost model). [`notes`] says, for a deployment, what its formats change
//! (figures from [`CostModel`], beside the same deployment in BF16) and what they may cost in
//! quality, with the source, from `content/precision.toml`.

use serde::{Deserialize, Serialize};
use trainer_engine::catalog::{Dtype, WeightFormat};
use trainer_engine::cost::{CostModel, Deployment, Efficiency, MemoryConfig};
use trainer_engine::error::ConfigError;
use trainer_engine::format;

/// The words: `content/precision.toml`.
pub const TEXT: &str = trainer_engine::files::PRECISION;

/// The id of the FP8 KV cache's entry (the weight formats' are [`WeightFormat::name`]).
pub const KV_FP8: &str = "kv-fp8";

/// [`TEXT`], parsed.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionText {
    pub format: Vec<FormatText>,
}

/// One format's words.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatText {
    pub id: String,
    /// What it changes, with placeholders (see the file's head).
    pub changes: String,
    /// What it may cost in quality.
    pub caveat: String,
    /// The citation for the caveat.
    pub source: String,
    pub url: String,
    /// A published quality measurement the caveat quotes.
    #[serde(default)]
    pub measured: Option<Measured>,
}

/// A benchmark score with and without the format.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    pub baseline: f64,
    pub quantized: f64,
}

/// One chosen format, its figures filled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    /// The entry's id (`fp8-weight-only`, `fp8`, `kv-fp8`).
    pub id: String,
    /// The choice as the forms name it.
    pub title: String,
    pub changes: String,
    pub caveat: String,
    pub source: String,
    pub url: String,
}

/// Parses the words.
pub fn text() -> Result<PrecisionText, ConfigError> {
    trainer_engine::files::read(TEXT)
        .map_err(|e| ConfigError::new("", format!("precision.toml: {e}")))
}

/// The notes for deployment `d` at efficiencies `eff` with memory split `memory`: one for its
/// weight format and one for its KV cache, each unless it is BF16. Each note's figures set
/// the choice beside BF16 with everything else as `d` has it.
pub fn notes(
    d: &Deployment,
    eff: &Efficiency,
    memory: &MemoryConfig,
) -> Result<Vec<Note>, ConfigError> {
    let words = text()?;
    let entry = |id: &str| {
        words
            .format
            .iter()
            .find(|f| f.id == id)
            .ok_or_else(|| ConfigError::new("", format!("precision.toml has no entry {id}")))
    };
    let mut out = Vec::new();
    let weights = d.weight_format();
    if weights != WeightFormat::Bf16 {
        let bf16 = d.clone().with_weight_format(WeightFormat::Bf16);
        out.push(note(
            entry(weights.name())?,
            weights.label(),
            d,
            &bf16,
            eff,
            memory,
        )?);
    }
    if d.kv_dtype == Dtype::Fp8 {
        let bf16 = Deployment {
            kv_dtype: Dtype::Bf16,
            ..d.clone()
        };
        out.push(note(entry(KV_FP8)?, "FP8 KV cache", d, &bf16, eff, memory)?);
    }
    Ok(out)
}

/// Fills one entry for `chosen` beside `bf16` (the same deployment with that choice at BF16).
fn note(
    f: &FormatText,
    title: &str,
    chosen: &Deployment,
    bf16: &Deployment,
    eff: &Efficiency,
    memory: &MemoryConfig,
) -> Result<Note, ConfigError> {
    let a = CostModel::new(chosen.clone(), *eff)?;
    let b = CostModel::new(bf16.clone(), *eff)?;
    let tflops = |c: &CostModel| format!("{} TFLOP/s", format::sig(c.sustained_flops() / 1e12, 3));
    let kib = |c: &CostModel| format!("{} KiB", format::num(c.kv_bytes_per_token() / 1024.0));
    let mut figures = vec![
        ("weights", format::gb(a.weight_bytes(), 3)),
        ("weights_bf16", format::gb(b.weight_bytes(), 3)),
        ("peak", tflops(&a)),
        ("peak_bf16", tflops(&b)),
        ("kv_token", kib(&a)),
        ("kv_token_bf16", kib(&b)),
        ("pool", format::int(a.kv_pool_tokens(memory))),
        ("pool_bf16", format::int(b.kv_pool_tokens(memory))),
    ];
    if let Some(m) = f.measured {
        figures.push(("baseline", format::num(m.baseline)));
        figures.push(("quantized", format::num(m.quantized)));
        figures.push((
            "recovered",
            format!("{} %", format::sig(m.quantized / m.baseline * 100.0, 3)),
        ));
    }
    Ok(Note {
        id: f.id.clone(),
        title: title.to_string(),
        changes: fill(&f.changes, &figures).map_err(|e| e.within(&f.id))?,
        caveat: fill(&f.caveat, &figures).map_err(|e| e.within(&f.id))?,
        source: f.source.clone(),
        url: f.url.clone(),
    })
}

/// Replaces each `{name}` in `text` with its figure; a name without one is an error.
fn fill(text: &str, figures: &[(&str, String)]) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| ConfigError::new("", "an unclosed placeholder"))?;
        let name = &rest[open + 1..open + close];
        let figure = figures
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| ConfigError::new("", format!("no figure for {{{name}}}")))?;
        out.push_str(&figure.1);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> Deployment {
        Deployment::seed()
    }

    #[test]
    fn the_words_have_one_entry_per_format_and_every_placeholder_fills() {
        let words = text().expect("precision.toml reads");
        let mut ids: Vec<&str> = words.format.iter().map(|f| f.id.as_str()).collect();
        ids.sort_unstable();
        assert_eq!(ids, ["fp8", "fp8-weight-only", KV_FP8]);
        for f in &words.format {
            assert!(f.url.starts_with("https://"), "{}: a link", f.id);
            assert!(!f.source.is_empty() && !f.caveat.is_empty(), "{}", f.id);
        }
        // Every choice at once, on the seed: every placeholder of every entry is filled.
        let d = Deployment {
            kv_dtype: Dtype::Fp8,
            ..seed()
        };
        for weights in [WeightFormat::Fp8WeightOnly, WeightFormat::Fp8] {
            let d = d.clone().with_weight_format(weights);
            let n = notes(&d, &Efficiency::CALIBRATED, &MemoryConfig::VLLM).expect("fills");
            assert_eq!(n.len(), 2);
            for note in &n {
                assert!(!note.changes.contains('{') && !note.caveat.contains('{'));
            }
        }
    }

    #[test]
    fn bf16_has_no_note_and_each_choice_has_its_own() {
        let eff = Efficiency::CALIBRATED;
        let mem = MemoryConfig::VLLM;
        assert!(notes(&seed(), &eff, &mem).unwrap().is_empty());
        let w8a16 = seed().with_weight_format(WeightFormat::Fp8WeightOnly);
        let n = notes(&w8a16, &eff, &mem).unwrap();
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].id, "fp8-weight-only");
        let kv = Deployment {
            kv_dtype: Dtype::Fp8,
            ..seed()
        };
        let n = notes(&kv, &eff, &mem).unwrap();
        assert_eq!(
            n.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(),
            [KV_FP8]
        );
    }

    #[test]
    fn the_figures_are_the_cost_models() {
        let eff = Efficiency::CALIBRATED;
        let mem = MemoryConfig::VLLM;
        let w8a8 = seed().with_weight_format(WeightFormat::Fp8);
        let n = &notes(&w8a8, &eff, &mem).unwrap()[0];
        let a = CostModel::new(w8a8.clone(), eff).unwrap();
        let b = CostModel::new(seed(), eff).unwrap();
        for figure in [
            format::gb(a.weight_bytes(), 3),
            format::gb(b.weight_bytes(), 3),
            format::int(a.kv_pool_tokens(&mem)),
            format!("{} TFLOP/s", format::sig(a.sustained_flops() / 1e12, 3)),
        ] {
            assert!(n.changes.contains(&figure), "{figure} in {}", n.changes);
        }
        // The measured recovery is computed from the card's two scores.
        assert!(n.caveat.contains("99.5 %"), "{}", n.caveat);
        // Weight-only FP8 keeps BF16's matmul rate: the note quotes BF16's figure as its own.
        let w8a16 = seed().with_weight_format(WeightFormat::Fp8WeightOnly);
        let n = &notes(&w8a16, &eff, &mem).unwrap()[0];
        let bf16_peak = format!("{} TFLOP/s", format::sig(b.sustained_flops() / 1e12, 3));
        assert!(n.changes.contains(&bf16_peak), "{}", n.changes);
    }

    #[test]
    fn a_missing_figure_is_an_error_not_a_brace() {
        assert!(fill("a {nothing} here", &[]).is_err());
        assert!(fill("a {open", &[]).is_err());
        assert_eq!(fill("x {a} y", &[("a", "1".into())]).unwrap(), "x 1 y");
    }
}
