//! What a build-up keeps in its URL: the step (`step=1` to `6`), the sub-step within it
//! (`sub=1`, ...), and for the replica build-up every parameter changed from the shipped
//! scenario (`prompt`, `budget`, `pool`, `cache=on|off`), and for the fleet build-up its
//! split into prefill and decode pools (`split`, the decode replicas). Read and written through the one
//! query parser ([`crate::sizing::query`]); a bad value keeps its default and is reported.

use super::fleet::MAX_SPLIT;
use super::replica::ReplicaParams;
use crate::sizing::query::{pairs, write};
use std::collections::BTreeMap;
use trainer_engine::error::ConfigError;

/// Steps in every build-up.
pub const STEPS: usize = 6;

/// A build-up's page as its query string gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildUpQuery {
    /// The step, from 0.
    pub step: usize,
    /// The sub-step within it, from 0, when the URL names one.
    pub sub: Option<usize>,
    /// The replica build-up's parameters (the shipped ones where the URL says nothing or
    /// something wrong).
    pub params: ReplicaParams,
    /// The fleet build-up's decode replicas (0: one pool prefills and decodes).
    pub split: u32,
    /// What is wrong with the query, one error per key.
    pub errors: Vec<ConfigError>,
    /// The text the query gave for each key named in `errors`.
    pub bad_text: BTreeMap<String, String>,
}

impl BuildUpQuery {
    /// Reads a build-up's query string. Never panics.
    pub fn parse(query: &str) -> BuildUpQuery {
        let p = pairs(query);
        let mut errors = Vec::new();
        let mut step = 0;
        if let Some(t) = p.get("step") {
            match t.trim().parse::<usize>() {
                Ok(n) if (1..=STEPS).contains(&n) => step = n - 1,
                _ => errors.push(ConfigError::new(
                    "step",
                    format!("must be a step from 1 to {STEPS}, got {t:?}"),
                )),
            }
        }
        let mut sub = None;
        if let Some(t) = p.get("sub") {
            match t.trim().parse::<usize>() {
                Ok(n) if n >= 1 => sub = Some(n - 1),
                _ => errors.push(ConfigError::new(
                    "sub",
                    format!("must be a sub-step from 1, got {t:?}"),
                )),
            }
        }
        let shipped = ReplicaParams::shipped();
        let mut params = shipped;
        for (i, (key, lo, hi)) in ReplicaParams::RANGES.iter().enumerate() {
            let Some(t) = p.get(*key) else { continue };
            match t.trim().parse::<u32>() {
                Ok(v) if (*lo..=*hi).contains(&v) => match i {
                    0 => params.d_prompt = v,
                    1 => params.budget = v,
                    _ => params.pool_blocks = v,
                },
                _ => errors.push(ConfigError::new(
                    *key,
                    format!("must be a whole number from {lo} to {hi}, got {t:?}"),
                )),
            }
        }
        if let Some(t) = p.get("cache") {
            match t.trim() {
                "on" | "1" | "true" => params.prefix_caching = true,
                "off" | "0" | "false" => params.prefix_caching = false,
                _ => errors.push(ConfigError::new(
                    "cache",
                    format!("must be on or off, got {t:?}"),
                )),
            }
        }
        let mut split = 0;
        if let Some(t) = p.get("split") {
            match t.trim().parse::<u32>() {
                Ok(v) if v <= MAX_SPLIT => split = v,
                _ => errors.push(ConfigError::new(
                    "split",
                    format!("must be a whole number of decode replicas from 0 to {MAX_SPLIT}, got {t:?}"),
                )),
            }
        }
        // Values each in range may still not fit together (D larger than the pool).
        if errors.is_empty() {
            if let Err(e) = params.validate() {
                errors.push(e);
                params = shipped;
            }
        }
        let bad_text = errors
            .iter()
            .filter_map(|e| p.get(&e.field).map(|t| (e.field.clone(), t.clone())))
            .collect();
        BuildUpQuery {
            step,
            sub,
            params,
            split,
            errors,
            bad_text,
        }
    }
}

/// The query string of a build-up at `step` (from 0), with its sub-step when given, and
/// every parameter that differs from the shipped scenario (the split when there is one).
pub fn buildup_query(
    step: usize,
    sub: Option<usize>,
    params: &ReplicaParams,
    split: u32,
) -> String {
    let shipped = ReplicaParams::shipped();
    let mut pairs: Vec<(&str, String)> = vec![("step", (step + 1).to_string())];
    if let Some(s) = sub {
        pairs.push(("sub", (s + 1).to_string()));
    }
    let changed = [
        ("prompt", params.d_prompt, shipped.d_prompt),
        ("budget", params.budget, shipped.budget),
        ("pool", params.pool_blocks, shipped.pool_blocks),
    ];
    for (k, v, d) in changed {
        if v != d {
            pairs.push((k, v.to_string()));
        }
    }
    if params.prefix_caching != shipped.prefix_caching {
        pairs.push((
            "cache",
            if params.prefix_caching { "on" } else { "off" }.into(),
        ));
    }
    if split > 0 {
        pairs.push(("split", split.to_string()));
    }
    write(&pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_round_trip_and_bad_values_are_named() {
        let q = BuildUpQuery::parse("step=5&sub=2&prompt=3000&cache=on");
        assert_eq!((q.step, q.sub), (4, Some(1)));
        assert_eq!(q.params.d_prompt, 3000);
        assert!(q.params.prefix_caching && q.errors.is_empty());
        assert_eq!(
            buildup_query(q.step, q.sub, &q.params, q.split),
            "step=5&sub=2&prompt=3000&cache=on"
        );
        let shipped = ReplicaParams::shipped();
        assert_eq!(buildup_query(0, None, &shipped, 0), "step=1");
        let q = BuildUpQuery::parse("step=3&split=2");
        assert_eq!((q.step, q.split), (2, 2));
        assert_eq!(
            buildup_query(q.step, q.sub, &q.params, q.split),
            "step=3&split=2"
        );
        for (query, field) in [
            ("step=0", "step"),
            ("step=7", "step"),
            ("step=two", "step"),
            ("sub=0", "sub"),
            ("prompt=-5", "prompt"),
            ("budget=1e9", "budget"),
            ("pool=12", "pool"),
            ("cache=maybe", "cache"),
            ("prompt=8000&pool=64", "prompt"),
            ("split=9", "split"),
            ("split=-1", "split"),
        ] {
            let q = BuildUpQuery::parse(query);
            assert_eq!(q.errors.len(), 1, "{query}");
            assert_eq!(q.errors[0].field, field, "{query}");
            assert_eq!(q.params, shipped, "{query} keeps the shipped values");
        }
        assert_eq!(BuildUpQuery::parse("step=9").bad_text["step"], "9");
    }
}
