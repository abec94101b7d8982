//! Figures in content prose, filled from data: no number is typed into a sentence a learner
//! reads (`core/tests/content.rs` checks every file in `content/`). A sentence names a figure
//! by a placeholder in braces, and [`fill`] replaces each one through a resolver that knows
//! where the figures of that text live; a placeholder it cannot resolve is an error, never
//! shown raw.
//!
//! The placeholders of a scenario file's `title` and `description` ([`fill_scenario`]):
//!
//! - `{param PATH}`: the number at `PATH` in the file as written, where `PATH` is keys joined
//!   by dots and an element of a list is picked by its index or by its `name`
//!   (`traffic.0.workload.arrival.rate`, `arms.proxy-buffering.relay.buffering.buffer_bytes`);
//! - `{times PATH PATH}` and `{per PATH PATH}`: the product and the quotient of two such
//!   numbers;
//! - `{prefill PATH}`: the cost model's compute time for a prompt of that many tokens
//!   prefilled at once on the scenario's (first arm's first) replica, attention included;
//!   `{prefill_linear PATH}` leaves attention out (the back-of-the-envelope figure);
//! - `{fig QUESTION/STEP}` and `{input QUESTION/NAME}`: a sizing step's value and an input as
//!   the calculator shows them at the question's defaults (the brief's figures).
//!
//! `param`, `times` and `per` take an optional last word for how the number is shown:
//! `duration` (seconds, shown in µs, ms or s), `min` (seconds, shown in minutes), `percent` (a fraction), `int` (rounded) or
//! `ceil` (rounded up) or `plain` (no thousands separator, as a command-line flag takes it);
//! without it a whole number shows exactly and others to four
//! significant figures (`format::num`).

use crate::cost::CostModel;
use crate::error::ConfigError;
use crate::format;

/// Replaces every `{...}` of `template` with what `resolve` makes of its inside. Every
/// placeholder that does not resolve (and an unclosed brace) is listed in the error, with the
/// resolver's reason.
pub fn fill(
    template: &str,
    mut resolve: impl FnMut(&str) -> Result<String, String>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(template.len());
    let mut errors = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('}') else {
            errors.push(format!("an unclosed brace in “{}”", &rest[i..]));
            rest = "";
            break;
        };
        let inside = rest[i + 1..i + j].trim();
        match resolve(inside) {
            Ok(s) => out.push_str(&s),
            Err(e) => errors.push(format!("{{{inside}}}: {e}")),
        }
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// [`fill`] for a page that must show something: a placeholder that does not resolve becomes
/// an em dash, never `{...}` (a native test checks every shipped text resolves).
pub fn fill_or_dash(
    template: &str,
    mut resolve: impl FnMut(&str) -> Result<String, String>,
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('}') else {
            rest = "";
            break;
        };
        out.push_str(&resolve(rest[i + 1..i + j].trim()).unwrap_or_else(|_| "—".into()));
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    out
}

/// The placeholders of `template` (what is inside each pair of braces), in order.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        out.push(rest[i + 1..i + j].trim());
        rest = &rest[i + j + 1..];
    }
    out
}

/// The number at `path` in `value` (keys joined by dots; a list's element by index or by its
/// `name`).
pub fn param(value: &toml::Value, path: &str) -> Result<f64, String> {
    let mut at = value;
    for key in path.split('.') {
        at = match at {
            toml::Value::Table(t) => t.get(key),
            toml::Value::Array(a) => match key.parse::<usize>() {
                Ok(i) => a.get(i),
                Err(_) => a
                    .iter()
                    .find(|x| x.get("name").and_then(|n| n.as_str()) == Some(key)),
            },
            _ => None,
        }
        .ok_or_else(|| format!("nothing at {key:?} of {path}"))?;
    }
    match at {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        _ => Err(format!("{path} is not a number")),
    }
}

/// `v` shown as `how` says (see the module's documentation).
pub fn shown(v: f64, how: Option<&str>) -> Result<String, String> {
    Ok(match how {
        None => format::num(v),
        Some("duration") => format::duration(v, 3),
        Some("percent") => format::percent(v),
        Some("min") => format!("{} min", format::sig(v / 60.0, 3)),
        Some("int") => format::int(v),
        Some("plain") => format::fixed(v, 6).replace(',', ""),
        Some("ceil") => format::int(v.ceil()),
        Some(other) => {
            return Err(format!(
                "no format {other:?} (duration, min, percent, int, ceil or plain)"
            ))
        }
    })
}

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
        [kind @ ("fig" | "input"), what] => sizing_figure(kind, what),
        _ => Err("not a placeholder a scenario's words take".into()),
    }
}

/// `{fig QUESTION/STEP}` or `{input QUESTION/NAME}` at the question's defaults.
pub fn sizing_figure(kind: &str, what: &str) -> Result<String, String> {
    use crate::sizing::{derive, Inputs, Question};
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
    fn params_resolve_by_key_index_and_name() {
        let f = file();
        assert_eq!(param(&f, "rate"), Ok(50.0));
        assert_eq!(param(&f, "pools.0.replicas"), Ok(8.0));
        assert_eq!(param(&f, "pools.a.replicas"), Ok(8.0));
        assert_eq!(param(&f, "arms.slow.decision_s"), Ok(0.019));
        assert!(param(&f, "pools.b.replicas").is_err());
        assert!(param(&f, "pools.0.name").is_err());
        assert!(param(&f, "nope").is_err());
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
    fn prefill_prices_on_the_cost_model_and_sizing_figures_read_the_defaults() {
        let f: toml::Value = toml::from_str("tokens = 32000").unwrap();
        let cost = CostModel::seed();
        let full = scenario_figure("prefill tokens", &f, Some(&cost)).unwrap();
        let linear = scenario_figure("prefill_linear tokens", &f, Some(&cost)).unwrap();
        assert_eq!(
            linear,
            format::duration(32000.0 * cost.prefill_time_per_token(), 3)
        );
        assert_ne!(full, linear, "attention adds to a long prompt");
        assert!(scenario_figure("input fleet/rate", &f, None).is_ok());
        assert!(scenario_figure("fig fleet/nope", &f, None).is_err());
        assert!(scenario_figure("fig nope/x", &f, None).is_err());
    }
}
