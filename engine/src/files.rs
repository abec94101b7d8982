//! The course's content files (`content/**/*.toml`), built into the program: one constant per
//! file, named after its path (`content/scenarios/fleet-seed.toml` is [`SCENARIOS_FLEET_SEED`]),
//! and [`read`], the one way any of them is read.
//!
//! With the `parse` feature a constant is the file's TOML text. Without it (the page's build)
//! the build script has already parsed every file, so a file that does not parse stops the
//! build, and a constant is the same table as JSON: the page then carries no TOML parser. Both
//! are read into the same values: whole numbers stay whole, and every other number comes back
//! to the bit (`serde_json`'s `float_roundtrip`), so a run set up in the page is the run set up
//! natively.

use serde::de::DeserializeOwned;

include!(concat!(env!("OUT_DIR"), "/files.rs"));

/// Whether this build reads TOML itself (natively and in the simulators' worker) or only the
/// JSON its build script made (the page).
pub const READS_TOML: bool = cfg!(feature = "parse");

/// Reads one of this module's constants as a `T`. The error is the parser's message.
pub fn read<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    #[cfg(feature = "parse")]
    {
        toml::from_str(text).map_err(|e| e.message().to_string())
    }
    #[cfg(not(feature = "parse"))]
    {
        // Straight from the JSON: going through a `toml::Value` put TOML's deserialiser in every
        // page that reads a file. The JSON is the file's table (no null, no date), so a type
        // reads the same values either way (`every_file_reads_the_same_from_its_json`).
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_reads_as_a_table() {
        for (name, text) in [
            ("scenarios/fleet-seed", SCENARIOS_FLEET_SEED),
            ("mock", MOCK),
            ("lab/lab", LAB_LAB),
            ("validation/measurements", VALIDATION_MEASUREMENTS),
        ] {
            let t: toml::Table = read(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!t.is_empty(), "{name}");
        }
    }

    /// The page's build reads every file straight from the JSON its build script writes: for
    /// every file, the JSON of its table reads back as the same table (so the same values, in
    /// any type read from it), and it has no date, which JSON would carry as a string.
    #[test]
    fn every_file_reads_the_same_from_its_json() {
        fn dated(v: &toml::Value) -> bool {
            match v {
                toml::Value::Datetime(_) => true,
                toml::Value::Array(a) => a.iter().any(dated),
                toml::Value::Table(t) => t.values().any(dated),
                _ => false,
            }
        }
        assert!(ALL.len() > 40, "{} files", ALL.len());
        for (name, text) in ALL {
            let t: toml::Table = read(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!t.values().any(dated), "{name} has a date");
            let json = serde_json::to_string(&t).unwrap();
            let back: toml::Table = serde_json::from_str(&json).unwrap();
            assert_eq!(back, t, "{name}");
        }
    }

    /// The page's build reads the JSON the build script writes; this is that round trip: the
    /// same table, every float to the bit.
    #[test]
    fn a_table_survives_json_exactly() {
        let t: toml::Table = read(SCENARIOS_FLEET_SEED).unwrap();
        let json = serde_json::to_string(&t).unwrap();
        let back: toml::Table = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        let awkward: toml::Table =
            toml::from_str("a = 0.1\nb = 1e-300\nc = 2.220446049250313e-16\nd = 3\ne = 3.0")
                .unwrap();
        let back: toml::Table =
            serde_json::from_str(&serde_json::to_string(&awkward).unwrap()).unwrap();
        assert_eq!(back, awkward);
        assert!(back["d"].is_integer() && back["e"].is_float());
    }
}
