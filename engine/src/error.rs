//! The one error type for bad configuration, shared by every part of the core.

use std::fmt;

/// A configuration value that cannot be used, with the field it came from.
///
/// Every constructor in the core validates its inputs and returns this instead of panicking,
/// so that the app can show the message beside the field that caused it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConfigError {
    /// Dotted path of the offending field, for example `workload.rate`.
    pub field: String,
    /// A sentence a learner can act on.
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }

    /// Prefixes the field path, so nested configs report `replica.scheduler.max_num_seqs`.
    pub fn within(mut self, parent: &str) -> Self {
        self.field = if self.field.is_empty() {
            parent.to_string()
        } else {
            format!("{parent}.{}", self.field)
        };
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A field's message as the page shows it: the field's label, then the message, which
/// completes the sentence ("Rate" and "is empty: enter a number" give "Rate is empty: enter a
/// number."); a full stop is added when the message ends without one.
pub fn sentence(label: &str, message: &str) -> String {
    let message = message.trim();
    let end = if message.ends_with(['.', '!', '?', '…']) {
        ""
    } else {
        "."
    };
    format!("{} {message}{end}", label.trim())
}

/// Checks that `value` is finite and within `[min, max]`; the message names the range.
pub fn check_range(field: &str, value: f64, min: f64, max: f64) -> Result<f64, ConfigError> {
    if !value.is_finite() {
        return Err(ConfigError::new(field, "must be a finite number"));
    }
    if value < min || value > max {
        return Err(ConfigError::new(
            field,
            format!(
                "must be between {} and {}, got {}",
                show(min),
                show(max),
                show(value)
            ),
        ));
    }
    Ok(value)
}

/// [`check_range`] over a named range (the engines' validated ranges are constants beside
/// their validators, so the lab reads the same bounds).
pub fn check_in(
    field: &str,
    value: f64,
    range: &std::ops::RangeInclusive<f64>,
) -> Result<f64, ConfigError> {
    check_range(field, value, *range.start(), *range.end())
}

/// Checks that `value` is finite and strictly positive and at most `max`.
pub fn check_positive(field: &str, value: f64, max: f64) -> Result<f64, ConfigError> {
    if !value.is_finite() {
        return Err(ConfigError::new(field, "must be a finite number"));
    }
    if value <= 0.0 {
        return Err(ConfigError::new(
            field,
            format!("must be greater than zero, got {}", show(value)),
        ));
    }
    if value > max {
        return Err(ConfigError::new(
            field,
            format!("must be at most {}, got {}", show(max), show(value)),
        ));
    }
    Ok(value)
}

/// A number as a message shows it: plain when it is of everyday size, in exponent form when it
/// is huge or tiny (so 1e300 is not printed as three hundred digits).
fn show(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e9).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Checks work caps given as (field, value, highest allowed): each must be 1 to its highest.
pub fn check_caps(caps: &[(&str, u64, u64)]) -> Result<(), ConfigError> {
    for &(field, v, max) in caps {
        if v == 0 || v > max {
            return Err(ConfigError::new(
                field,
                format!("must be 1 to {max}, got {v}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_completes_the_sentence_its_label_starts() {
        assert_eq!(
            sentence("Rate", "is empty: enter a number"),
            "Rate is empty: enter a number."
        );
        assert_eq!(
            sentence("Tokens per chat ", " is longer than the pool."),
            "Tokens per chat is longer than the pool."
        );
    }

    #[test]
    fn messages_show_huge_and_tiny_numbers_in_exponent_form() {
        let e = check_positive("horizon", 1e300, 1e7).unwrap_err();
        assert_eq!(e.message, "must be at most 10000000, got 1e300");
        let e = check_range("mfu", 1e-9, 1e-3, 1.0).unwrap_err();
        assert_eq!(e.message, "must be between 0.001 and 1, got 1e-9");
        let e = check_positive("rate", -5.0, 10.0).unwrap_err();
        assert_eq!(e.message, "must be greater than zero, got -5");
    }
}
