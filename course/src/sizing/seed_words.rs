//! The seed's names and figures the start page's words are filled with (`content/home.toml`):
//! the model, the GPU, the load and the efficiencies, from the calculator's presets and the
//! cost model. The app's start page and the build's first paint (`site/`) fill from this one
//! list.

use super::{Inputs, Question};
use trainer_engine::cost::CostModel;
use trainer_engine::format;

/// Each `{name}` of the start page's words with its value at the seed.
pub fn seed_words() -> Vec<(&'static str, String)> {
    let seed = Inputs::defaults(Question::Fleet);
    let v = |name: &str| seed.get(name).unwrap_or(0.0);
    let batch = Inputs::defaults(Question::GpuHours)
        .get("batch")
        .unwrap_or(32.0) as u32;
    let cost = CostModel::seed();
    let d = cost.deployment();
    let gpu_short = d
        .gpu
        .name
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    vec![
        ("model", d.model.name.clone()),
        ("gpu", d.gpu.name.clone()),
        ("gpu_short", gpu_short),
        ("dtype", d.weight_dtype.label().to_string()),
        ("rate", format::int(v("rate"))),
        ("prompt", format::int(v("prompt_tokens"))),
        ("output", format::int(v("output_tokens"))),
        ("mfu", format!("{} %", format::int(v("mfu") * 100.0))),
        ("mbu", format!("{} %", format::int(v("mbu") * 100.0))),
        ("batch", batch.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_value_from_the_seed() {
        let w = seed_words();
        let get = |k: &str| w.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert_eq!(
            get("model"),
            Some(CostModel::seed().deployment().model.name.clone())
        );
        assert_eq!(
            get("rate"),
            Some(format::int(
                Inputs::defaults(Question::Fleet).get("rate").unwrap()
            ))
        );
        assert!(w.iter().all(|(_, v)| !v.is_empty()));
    }
}
