//! Figures in prose, filled from data: no number is typed into a sentence a learner reads (the
//! course's content test checks every file in `content/`). A sentence names a figure by a
//! placeholder in braces, and [`fill`] replaces each one through a resolver that knows where
//! the figures of that text live; a placeholder it cannot resolve is an error, never shown raw.
//!
//! The pieces every resolver shares: [`param`] reads the number at a dotted path of a TOML
//! value (keys joined by dots; an element of a list by its index or by its `name`), and
//! [`shown`] states a number in one of the formats a placeholder may name as its last word:
//! `duration` (seconds, shown in µs, ms or s), `min` (seconds, shown in minutes), `percent` (a
//! fraction), `int` (rounded), `ceil` (rounded up) or `plain` (no thousands separator, as a
//! command-line flag takes it); without it a whole number shows exactly and others to four
//! significant figures (`format::num`). A scenario file's words are resolved by
//! [`crate::scenario::words`].

use crate::format;

/// One piece of a template, in order: text between placeholders, a placeholder (what is inside
/// its braces, trimmed), or the tail after a brace that never closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Name(&'a str),
    Unclosed(&'a str),
}

/// The pieces of `template`: the one brace scanner every filler here (and the app's narration)
/// reads templates through. No piece of text is empty.
pub fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        if i > 0 {
            out.push(Piece::Text(&rest[..i]));
        }
        let Some(j) = rest[i..].find('}') else {
            out.push(Piece::Unclosed(&rest[i..]));
            return out;
        };
        out.push(Piece::Name(rest[i + 1..i + j].trim()));
        rest = &rest[i + j + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// Replaces every `{...}` of `template` with what `resolve` makes of its inside. Every
/// placeholder that does not resolve (and an unclosed brace) is listed in the error, with the
/// resolver's reason.
pub fn fill(
    template: &str,
    mut resolve: impl FnMut(&str) -> Result<String, String>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(template.len());
    let mut errors = Vec::new();
    for piece in pieces(template) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Name(inside) => match resolve(inside) {
                Ok(s) => out.push_str(&s),
                Err(e) => errors.push(format!("{{{inside}}}: {e}")),
            },
            Piece::Unclosed(tail) => errors.push(format!("an unclosed brace in “{tail}”")),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// [`fill`] for a page that must show something: a placeholder that does not resolve becomes
/// an em dash, never `{...}`, and an unclosed brace's tail is left out (a native test checks
/// every shipped text resolves).
pub fn fill_or_dash(
    template: &str,
    mut resolve: impl FnMut(&str) -> Result<String, String>,
) -> String {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Name(inside) => out.push_str(&resolve(inside).unwrap_or_else(|_| "—".into())),
            Piece::Unclosed(_) => {}
        }
    }
    out
}

/// The placeholders of `template` (what is inside each pair of braces), in order.
pub fn placeholders(template: &str) -> Vec<&str> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Name(n) => Some(n),
            _ => None,
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_splits_into_text_names_and_an_unclosed_tail() {
        assert_eq!(
            pieces("a {x} b{ y }{z"),
            [
                Piece::Text("a "),
                Piece::Name("x"),
                Piece::Text(" b"),
                Piece::Name("y"),
                Piece::Unclosed("{z"),
            ]
        );
        assert_eq!(fill_or_dash("a {x} {z", |_| Ok("1".into())), "a 1 ");
        assert!(fill("{z", |_| Ok(String::new())).is_err());
        assert_eq!(placeholders("{a}{b}{c"), ["a", "b"]);
    }

    fn file() -> toml::Value {
        toml::from_str("rate = 50.0\npools = [{ name = \"a\", replicas = 8 }]\narms = [{ name = \"slow\", decision_s = 0.019 }]")
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
}
