//! The serving metrics `vllm bench serve` reports, named and defined as it defines them
//! (vllm/benchmarks/serve.py), computed from a run's request records.
//!
//! - TTFT: arrival to first token, per request.
//! - TPOT: per request, (end-to-end latency − TTFT) / (output tokens − 1), for requests with
//!   more than one output token.
//! - ITL: every gap between two consecutive tokens of a request, pooled over requests.
//! - E2EL: arrival to last token, per request.
//! - request goodput: requests that met every given target, per second of the run.
//!
//! Means, medians, standard deviations (population, as numpy's default) and the 99th
//! percentile (linear interpolation between order statistics, as numpy's default), in
//! milliseconds; throughputs over the run's duration (first arrival to last finish).

use crate::replica::RequestRecord;
use crate::stats::Summary;
use serde::{Deserialize, Serialize};

/// Targets for goodput, as `--goodput ttft:MS tpot:MS e2el:MS` gives them (milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoodputSlo {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub e2el_ms: Option<f64>,
}

/// One latency metric's statistics, milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencyStats {
    pub mean_ms: f64,
    pub median_ms: f64,
    pub std_ms: f64,
    pub p99_ms: f64,
}

/// The figures of a `vllm bench serve` result, under its JSON key names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ServeMetrics {
    pub completed: u64,
    pub duration: f64,
    pub total_input_tokens: u64,
    pub total_output_tokens: u64,
    pub request_throughput: f64,
    pub output_throughput: f64,
    pub total_token_throughput: f64,
    /// Present only when targets were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_goodput: Option<f64>,
    pub mean_ttft_ms: f64,
    pub median_ttft_ms: f64,
    pub std_ttft_ms: f64,
    pub p99_ttft_ms: f64,
    pub mean_tpot_ms: f64,
    pub median_tpot_ms: f64,
    pub std_tpot_ms: f64,
    pub p99_tpot_ms: f64,
    pub mean_itl_ms: f64,
    pub median_itl_ms: f64,
    pub p99_itl_ms: f64,
    pub mean_e2el_ms: f64,
    pub median_e2el_ms: f64,
    pub std_e2el_ms: f64,
    pub p99_e2el_ms: f64,
}

/// Statistics of `values` (seconds) in milliseconds; zeros when empty.
pub fn latency_stats(values: &mut [f64]) -> LatencyStats {
    if values.is_empty() {
        return LatencyStats::default();
    }
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    LatencyStats {
        mean_ms: mean * 1e3,
        median_ms: percentile(values, 50.0) * 1e3,
        std_ms: libm::sqrt(var) * 1e3,
        p99_ms: percentile(values, 99.0) * 1e3,
    }
}

/// numpy's default percentile of sorted `v`: linear interpolation between closest ranks.
pub fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0).clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
}

impl ServeMetrics {
    /// The metrics of the finished requests among `records`; `itl` is the run's exact
    /// inter-token distribution (per token), `slo` the goodput targets if any.
    pub fn from_records(
        records: &[RequestRecord],
        itl: &Summary,
        slo: Option<&GoodputSlo>,
    ) -> Self {
        let done: Vec<&RequestRecord> = records
            .iter()
            .filter(|r| !r.rejected && r.finish.is_some() && r.first_token.is_some())
            .collect();
        let start = records
            .iter()
            .map(|r| r.arrival)
            .fold(f64::INFINITY, f64::min);
        let end = done
            .iter()
            .filter_map(|r| r.finish)
            .fold(f64::NEG_INFINITY, f64::max);
        let duration = if end > start { end - start } else { 0.0 };
        let mut ttft = Vec::with_capacity(done.len());
        let mut tpot = Vec::with_capacity(done.len());
        let mut e2el = Vec::with_capacity(done.len());
        let mut good = 0u64;
        let (mut input, mut output) = (0u64, 0u64);
        for r in &done {
            let (first, finish) = (
                r.first_token.unwrap_or(r.arrival),
                r.finish.unwrap_or(r.arrival),
            );
            let t = first - r.arrival;
            let e = finish - r.arrival;
            let p = (r.output_tokens > 1).then(|| (e - t) / (r.output_tokens - 1) as f64);
            ttft.push(t);
            e2el.push(e);
            if let Some(p) = p {
                tpot.push(p);
            }
            input += r.prompt_len as u64;
            output += r.output_tokens as u64;
            if let Some(s) = slo {
                let ok = s.ttft_ms.is_none_or(|m| t * 1e3 <= m)
                    && s.tpot_ms.is_none_or(|m| p.unwrap_or(0.0) * 1e3 <= m)
                    && s.e2el_ms.is_none_or(|m| e * 1e3 <= m);
                good += ok as u64;
            }
        }
        let per_s = |x: f64| if duration > 0.0 { x / duration } else { 0.0 };
        let (t, p, e) = (
            latency_stats(&mut ttft),
            latency_stats(&mut tpot),
            latency_stats(&mut e2el),
        );
        ServeMetrics {
            completed: done.len() as u64,
            duration,
            total_input_tokens: input,
            total_output_tokens: output,
            request_throughput: per_s(done.len() as f64),
            output_throughput: per_s(output as f64),
            total_token_throughput: per_s((input + output) as f64),
            request_goodput: slo.map(|_| per_s(good as f64)),
            mean_ttft_ms: t.mean_ms,
            median_ttft_ms: t.median_ms,
            std_ttft_ms: t.std_ms,
            p99_ttft_ms: t.p99_ms,
            mean_tpot_ms: p.mean_ms,
            median_tpot_ms: p.median_ms,
            std_tpot_ms: p.std_ms,
            p99_tpot_ms: p.p99_ms,
            mean_itl_ms: itl.mean * 1e3,
            median_itl_ms: itl.p50 * 1e3,
            p99_itl_ms: itl.p99 * 1e3,
            mean_e2el_ms: e.mean_ms,
            median_e2el_ms: e.median_ms,
            std_e2el_ms: e.std_ms,
            p99_e2el_ms: e.p99_ms,
        }
    }

    /// The figure named by one of the JSON keys above, if it is one.
    pub fn get(&self, key: &str) -> Option<f64> {
        Some(match key {
            "request_throughput" => self.request_throughput,
            "output_throughput" => self.output_throughput,
            "total_token_throughput" => self.total_token_throughput,
            "mean_ttft_ms" => self.mean_ttft_ms,
            "median_ttft_ms" => self.median_ttft_ms,
            "p99_ttft_ms" => self.p99_ttft_ms,
            "mean_tpot_ms" => self.mean_tpot_ms,
            "median_tpot_ms" => self.median_tpot_ms,
            "p99_tpot_ms" => self.p99_tpot_ms,
            "mean_itl_ms" => self.mean_itl_ms,
            "median_itl_ms" => self.median_itl_ms,
            "mean_e2el_ms" => self.mean_e2el_ms,
            "median_e2el_ms" => self.median_e2el_ms,
            "p99_e2el_ms" => self.p99_e2el_ms,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_as_numpy_does() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert!((percentile(&v, 99.0) - 3.97).abs() < 1e-12);
        let mut w = vec![0.003, 0.001, 0.002];
        let s = latency_stats(&mut w);
        assert!((s.median_ms - 2.0).abs() < 1e-12);
        assert!((s.std_ms - libm::sqrt(2.0 / 3.0)).abs() < 1e-9);
    }
}
