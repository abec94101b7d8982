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
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub mean_ms: f64,
    pub median_ms: f64,
    pub std_ms: f64,
    pub p99_ms: f64,
}

/// The figures of a `vllm bench serve` result, under its JSON key names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Absent where the run kept distributions rather than every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub std_ttft_ms: Option<f64>,
    pub p99_ttft_ms: f64,
    pub mean_tpot_ms: f64,
    pub median_tpot_ms: f64,
    /// Absent where the run kept distributions rather than every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub std_tpot_ms: Option<f64>,
    pub p99_tpot_ms: f64,
    pub mean_itl_ms: f64,
    pub median_itl_ms: f64,
    pub p99_itl_ms: f64,
    pub mean_e2el_ms: f64,
    pub median_e2el_ms: f64,
    /// Absent where the run kept distributions rather than every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub std_e2el_ms: Option<f64>,
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

/// One request as a benchmark client sees it: sent, first token, last token (seconds), and
/// its token counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Served {
    pub sent: f64,
    pub first_token: f64,
    pub last_token: f64,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
}

impl ServeMetrics {
    /// The metrics of a replica run's finished requests; `itl` is the run's exact
    /// inter-token distribution (per token), `slo` the goodput targets if any.
    pub fn from_records(
        records: &[RequestRecord],
        itl: &Summary,
        slo: Option<&GoodputSlo>,
    ) -> Self {
        let start = records
            .iter()
            .map(|r| r.arrival)
            .fold(f64::INFINITY, f64::min);
        let served = records.iter().filter(|r| !r.rejected).filter_map(|r| {
            Some(Served {
                sent: r.arrival,
                first_token: r.first_token?,
                last_token: r.finish?,
                prompt_tokens: r.prompt_len,
                output_tokens: r.output_tokens,
            })
        });
        ServeMetrics::from_served(served, start, itl, slo)
    }

    /// The metrics of served requests; the run's duration runs from `start` to the last token.
    pub fn from_served(
        served: impl IntoIterator<Item = Served>,
        start: f64,
        itl: &Summary,
        slo: Option<&GoodputSlo>,
    ) -> Self {
        let mut ttft = Vec::new();
        let mut tpot = Vec::new();
        let mut e2el = Vec::new();
        let mut good = 0u64;
        let (mut input, mut output) = (0u64, 0u64);
        let mut end = f64::NEG_INFINITY;
        for r in served {
            let t = r.first_token - r.sent;
            let e = r.last_token - r.sent;
            end = end.max(r.last_token);
            let p = (r.output_tokens > 1).then(|| (e - t) / (r.output_tokens - 1) as f64);
            ttft.push(t);
            e2el.push(e);
            if let Some(p) = p {
                tpot.push(p);
            }
            input += r.prompt_tokens as u64;
            output += r.output_tokens as u64;
            if let Some(s) = slo {
                let ok = s.ttft_ms.is_none_or(|m| t * 1e3 <= m)
                    && s.tpot_ms.is_none_or(|m| p.unwrap_or(0.0) * 1e3 <= m)
                    && s.e2el_ms.is_none_or(|m| e * 1e3 <= m);
                good += ok as u64;
            }
        }
        let completed = ttft.len() as u64;
        let duration = if end > start { end - start } else { 0.0 };
        let per_s = |x: f64| if duration > 0.0 { x / duration } else { 0.0 };
        let (t, p, e) = (
            latency_stats(&mut ttft),
            latency_stats(&mut tpot),
            latency_stats(&mut e2el),
        );
        ServeMetrics {
            completed,
            duration,
            total_input_tokens: input,
            total_output_tokens: output,
            request_throughput: per_s(completed as f64),
            output_throughput: per_s(output as f64),
            total_token_throughput: per_s((input + output) as f64),
            request_goodput: slo.map(|_| per_s(good as f64)),
            mean_ttft_ms: t.mean_ms,
            median_ttft_ms: t.median_ms,
            std_ttft_ms: Some(t.std_ms),
            p99_ttft_ms: t.p99_ms,
            mean_tpot_ms: p.mean_ms,
            median_tpot_ms: p.median_ms,
            std_tpot_ms: Some(p.std_ms),
            p99_tpot_ms: p.p99_ms,
            mean_itl_ms: itl.mean * 1e3,
            median_itl_ms: itl.p50 * 1e3,
            p99_itl_ms: itl.p99 * 1e3,
            mean_e2el_ms: e.mean_ms,
            median_e2el_ms: e.median_ms,
            std_e2el_ms: Some(e.std_ms),
            p99_e2el_ms: e.p99_ms,
        }
    }

    /// The same figures from distributions (a fleet run keeps histograms, not every request):
    /// TTFT, TPOT and E2EL per request and ITL per token, seconds; no standard deviations, and
    /// goodput only when `goodput` is given.
    #[allow(clippy::too_many_arguments)]
    pub fn from_summaries(
        completed: u64,
        duration: f64,
        input_tokens: u64,
        output_tokens: u64,
        ttft: &Summary,
        tpot: &Summary,
        itl: &Summary,
        e2el: &Summary,
        goodput: Option<f64>,
    ) -> Self {
        let per_s = |x: f64| if duration > 0.0 { x / duration } else { 0.0 };
        ServeMetrics {
            completed,
            duration,
            total_input_tokens: input_tokens,
            total_output_tokens: output_tokens,
            request_throughput: per_s(completed as f64),
            output_throughput: per_s(output_tokens as f64),
            total_token_throughput: per_s((input_tokens + output_tokens) as f64),
            request_goodput: goodput,
            mean_ttft_ms: ttft.mean * 1e3,
            median_ttft_ms: ttft.p50 * 1e3,
            std_ttft_ms: None,
            p99_ttft_ms: ttft.p99 * 1e3,
            mean_tpot_ms: tpot.mean * 1e3,
            median_tpot_ms: tpot.p50 * 1e3,
            std_tpot_ms: None,
            p99_tpot_ms: tpot.p99 * 1e3,
            mean_itl_ms: itl.mean * 1e3,
            median_itl_ms: itl.p50 * 1e3,
            p99_itl_ms: itl.p99 * 1e3,
            mean_e2el_ms: e2el.mean * 1e3,
            median_e2el_ms: e2el.p50 * 1e3,
            std_e2el_ms: None,
            p99_e2el_ms: e2el.p99 * 1e3,
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
