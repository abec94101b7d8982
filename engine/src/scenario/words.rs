//! The words of a scenario file (its `title` and `description`), filled when the file is
//! parsed ([`fill_scenario`]) with placeholders (see [`crate::text`] for the formats):
//!
//! - `{param PATH}`: the number at `PATH` in the file as written
//!   (`traffic.0.workload.arrival.rate`, `arms.proxy-buffering.relay.buffering.buffer_bytes`);
//! - `{times PATH PATH}` and `{per PATH PATH}`: the product and the quotient of two such
//!   numbers;
//! - `{prefill PATH}`: the cost model's compute time for a prompt of that many tokens
//!   prefilled at once on the scenario's (first arm's first) replica, attention included;
//!   `{prefill_linear PATH}` leaves attention out (the back-of-the-envelope figure).
//!
//! A placeholder that does not resolve refuses the file on the field that holds it.

use crate::cost::CostModel;
use crate::error::ConfigError;
use crate::format;
use crate::text::{fill, param, shown};

/// Resolves one placeholder of a scenario's words: `file` is the file as written, `cost` the
/// cost model of its (first) replica.
pub fn scenario_figure(
    inside: &str,
    file: &toml::Value,
    cost: Option<&CostModel>,
) -> Result<String, String> {
    let words: Vec<&str> = inside.split_whitespace().collect();
    match words.as_slice() {
        ["param", path] => shown(param(file, path)?, None),
        ["param", path, how] => shown(param(file, path)?, Some(how)),
        ["times" | "per", a, b, rest @ ..] if rest.len() <= 1 => {
            let (x, y) = (param(file, a)?, param(file, b)?);
            let v = if words[0] == "times" { x * y } else { x / y };
            if !v.is_finite() {
                return Err("not a finite number".into());
            }
            shown(v, rest.first().copied())
        }
        [kind @ ("prefill" | "prefill_linear"), path] => {
            let cost = cost.ok_or("the scenario has no replica to price it on")?;
            let tokens = param(file, path)?;
            if !(1.0..=1e7).contains(&tokens) {
                return Err(format!("{tokens} is not a prompt length"));
            }
            let mut t = tokens * cost.prefill_time_per_token();
            if *kind == "prefill" {
                t += cost.prompt_attention_time(tokens as u32);
            }
            Ok(format::duration(t, 3))
        }
        _ => Err("not a placeholder a scenario's words take".into()),
    }
}

/// A scenario's `text` (its title or description) with every placeholder filled; an error
/// names the field and every placeholder that does not resolve.
pub fn fill_scenario(
    field: &str,
    text: &str,
    file: &toml::Value,
    cost: Option<&CostModel>,
) -> Result<String, ConfigError> {
    fill(text, |inside| scenario_figure(inside, file, cost))
        .map_err(|e| ConfigError::new(field, e.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> toml::Value {
        toml::from_str(
            r#"
            rate = 50.0
            [[pools]]
            name = "a"
            replicas = 8
            [[arms]]
            name = "slow"
            decision_s = 0.019
            "#,
        )
        .unwrap()
    }

    #[test]
    fn a_scenario_text_fills_or_names_what_does_not_resolve() {
        let f = file();
        let t = fill_scenario(
            "description",
            "{param pools.0.replicas} replicas at {param rate} req/s, {param arms.slow.decision_s duration} a \
             decision, {times arms.slow.decision_s rate percent} busy",
            &f,
            None,
        )
        .unwrap();
        assert_eq!(t, "8 replicas at 50 req/s, 19 ms a decision, 95 % busy");
        let e = fill_scenario(
            "description",
            "{param nope} and {prefill rate} and {x",
            &f,
            None,
        )
        .unwrap_err();
        assert_eq!(e.field, "description");
        assert!(e.message.contains("{param nope}"), "{}", e.message);
        assert!(e.message.contains("{prefill rate}"), "{}", e.message);
        assert!(e.message.contains("unclosed"), "{}", e.message);
        assert!(fill_scenario("d", "{param rate bogus}", &f, None).is_err());
        assert!(fill_scenario("d", "{wat}", &f, None).is_err());
    }

    #[test]
    fn prefill_prices_on_the_cost_model() {
        let f: toml::Value = toml::from_str("tokens = 32000").unwrap();
        let cost = CostModel::seed();
        let full = scenario_figure("prefill tokens", &f, Some(&cost)).unwrap();
        let linear = scenario_figure("prefill_linear tokens", &f, Some(&cost)).unwrap();
        assert_eq!(
            linear,
            format::duration(32000.0 * cost.prefill_time_per_token(), 3)
        );
        assert_ne!(full, linear, "attention adds to a long prompt");
        assert!(
            scenario_figure("input fleet/rate", &f, None).is_err(),
            "the course's, not the engine's"
        );
    }
}
