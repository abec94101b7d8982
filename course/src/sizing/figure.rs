//! The calculator's figures as placeholders in words: `{fig QUESTION/STEP}` and
//! `{input QUESTION/NAME}`, a sizing step's value and an input as the calculator shows them at
//! the question's defaults (the brief's figures), for words about a scenario file (a moment's
//! reasons, a lab preset's note) beside the file's own placeholders.

use super::{derive, Inputs, Question};
use crate::text::scenario_figure;
use trainer_engine::cost::CostModel;

/// Resolves one placeholder of words about a scenario file: the engine's
/// ([`scenario_figure`]), and `{fig ...}` and `{input ...}` ([`sizing_figure`]).
pub fn figure(
    inside: &str,
    file: &toml::Value,
    cost: Option<&CostModel>,
) -> Result<String, String> {
    match inside.split_whitespace().collect::<Vec<_>>().as_slice() {
        [kind @ ("fig" | "input"), what] => sizing_figure(kind, what),
        _ => scenario_figure(inside, file, cost),
    }
}

/// `{fig QUESTION/STEP}` or `{input QUESTION/NAME}` at the question's defaults.
pub fn sizing_figure(kind: &str, what: &str) -> Result<String, String> {
    let (q, name) = what
        .split_once('/')
        .ok_or_else(|| format!("{what:?} is not question/name"))?;
    let q = Question::from_id(q).ok_or_else(|| format!("no question {q:?}"))?;
    let inputs = Inputs::defaults(q);
    if kind == "input" {
        return inputs
            .shown(q, name)
            .ok_or_else(|| format!("{} has no input {name:?}", q.id()));
    }
    let d = derive(q, &inputs).map_err(|_| "the defaults do not derive".to_string())?;
    d.step(name)
        .map(|s| s.display.clone())
        .ok_or_else(|| format!("{} has no step {name:?}", q.id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_figures_read_the_defaults() {
        let f: toml::Value = toml::from_str("tokens = 32000").unwrap();
        assert!(figure("input fleet/rate", &f, None).is_ok());
        assert!(figure("fig fleet/decode_step", &f, None).is_ok());
        assert!(figure("fig fleet/nope", &f, None).is_err());
        assert!(figure("fig nope/x", &f, None).is_err());
        assert!(
            figure("param tokens", &f, None).is_ok(),
            "the engine's placeholders too"
        );
    }
}
