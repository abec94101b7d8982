//! The one error type for bad configuration, shared by every part of the core.

use std::fmt;

/// A configuration value that cannot be used, with the field it came from.
///
/// Every constructor in the core validates its inputs and returns this instead of panicking,
/// so that the app can show the message beside the field that caused it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
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

/// Checks that `value` is finite and within `[min, max]`; the message names the range.
pub fn check_range(field: &str, value: f64, min: f64, max: f64) -> Result<f64, ConfigError> {
    if !value.is_finite() {
        return Err(ConfigError::new(field, "must be a finite number"));
    }
    if value < min || value > max {
        return Err(ConfigError::new(
            field,
            format!("must be between {min} and {max}, got {value}"),
        ));
    }
    Ok(value)
}

/// Checks that `value` is finite and strictly positive and at most `max`.
pub fn check_positive(field: &str, value: f64, max: f64) -> Result<f64, ConfigError> {
    if !value.is_finite() {
        return Err(ConfigError::new(field, "must be a finite number"));
    }
    if value <= 0.0 {
        return Err(ConfigError::new(
            field,
            format!("must be greater than zero, got {value}"),
        ));
    }
    if value > max {
        return Err(ConfigError::new(
            field,
            format!("must be at most {max}, got {value}"),
        ));
    }
    Ok(value)
}
