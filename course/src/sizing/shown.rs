//! Inputs as a page states them: each input's label and its value as the form shows it (a
//! choice by its option's label, a percentage in percent, with the unit), so a page that
//! reads the learner's inputs can say which they are.

use super::{InputKind, Inputs, Question};
use trainer_engine::format;

impl Inputs {
    /// Input `name` of question `q` as a page shows it, e.g. `Llama 3.1 70B`, `100 req/s` or
    /// `60 %`; `None` for a name the question does not have.
    pub fn shown(&self, q: Question, name: &str) -> Option<String> {
        let spec = self.specs(q).into_iter().find(|s| s.name == name)?;
        if spec.kind == InputKind::Choice {
            let id = match name {
                "model" => self.model().to_string(),
                "gpu" => self.gpu().to_string(),
                "weight_dtype" => self.weight_format().name().to_string(),
                _ => self.kv_dtype().name().to_string(),
            };
            return Some(
                spec.options
                    .iter()
                    .find(|o| o.id == id)
                    .map_or(id, |o| o.label.clone()),
            );
        }
        let v = self.get(name)?;
        let text = format::group_thousands(&spec.kind.field_text(v));
        let unit = spec.field_unit();
        Some(format!("{text} {unit}").trim().to_string())
    }

    /// Every input of question `q` that differs from the question's default, as (label,
    /// value shown), in form order: what a page says when it uses the learner's inputs.
    pub fn changed_shown(&self, q: Question) -> Vec<(&'static str, String)> {
        let specs = self.specs(q);
        self.changed(q)
            .into_iter()
            .filter_map(|(name, _)| {
                let spec = specs.iter().find(|s| s.name == name)?;
                Some((spec.label, self.shown(q, name)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_read_as_the_form_shows_them() {
        let q = Question::Fleet;
        let mut inputs = Inputs::defaults(q);
        assert!(inputs.changed_shown(q).is_empty());
        assert_eq!(inputs.shown(q, "model").as_deref(), Some("Llama 3.1 8B"));
        assert_eq!(inputs.shown(q, "nonsense"), None);
        inputs.set_choice(q, "model", "llama-3.1-70b").unwrap();
        inputs.set(q, "rate", 1000.0).unwrap();
        let changed = inputs.changed_shown(q);
        let labels: Vec<_> = changed.iter().map(|(l, _)| *l).collect();
        assert!(labels.contains(&"Model"), "{changed:?}");
        let rate = changed.iter().find(|(_, v)| v.contains("1,000")).unwrap();
        assert!(
            rate.1.ends_with("req/s") || rate.1.contains("1,000"),
            "{rate:?}"
        );
        assert!(
            changed.iter().any(|(_, v)| v == "Llama 3.1 70B"),
            "{changed:?}"
        );
    }
}
