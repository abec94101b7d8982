//! The simulators against closed-form queueing results.
//!
//! Each test states its tolerance and where it comes from. Statistical tolerances were set
//! from the spread of the same estimator over independent replications of the textbook queue
//! (Lindley's recursion for M/D/1, the cyclic recursion for M/D/c), at the sample sizes used
//! here: about four standard deviations, so a correct simulator fails only on a freak seed
//! (the seeds are fixed, so the tests are deterministic), while a wrong formula, such as
//! M/M/1's ρS/(1 − ρ) for M/D/1 or Erlang C's Wq for M/D/c, is off by 75 to 100 % and fails.
//! Little's law is checked to the end of the drain, where it is an identity: its tolerances
//! are bounds on the discretisation of the check itself, not statistics.
//!
//! The whole file runs in about 3 s in a debug build (2 shared cores); no release build needed.

use trainer_engine::cost::{BatchItem, BatchTotals};
use trainer_engine::fleet::{FleetConfig, FleetSim, Outcome, PoolConfig, RoutingPolicy};
use trainer_engine::replica::{
    ReplicaConfig, ReplicaSim, ReplicaSimConfig, RunReport, Verdict, WorkLimits,
};
use trainer_engine::scenario::ReplicaScenario;
use trainer_engine::workload::{Arrival, LengthDist, WorkloadConfig};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Prompt and output lengths of the one-at-a-time runs: a 512-token prefill step and three
/// batch-of-one decode steps, about 36 ms of deterministic service on the seed H100.
const PROMPT: u32 = 512;
const OUTPUT: u32 = 4;

/// The seed replica serving one request at a time, with nothing shared between requests.
fn one_at_a_time() -> ReplicaConfig {
    let mut r = ReplicaConfig::seed();
    r.scheduler.max_num_seqs = 1;
    r.scheduler.enable_prefix_caching = false;
    r
}

/// Constant-length requests arriving as `arrival` for `duration_s`.
fn constant_workload(arrival: Arrival, duration_s: f64, seed: u64) -> WorkloadConfig {
    WorkloadConfig {
        arrival,
        prompt_len: LengthDist::Constant { value: PROMPT },
        output_len: LengthDist::Constant { value: OUTPUT },
        sessions: None,
        tenants: 1,
        duration_s,
        seed,
    }
}

fn replica_run(replica: ReplicaConfig, workload: WorkloadConfig) -> RunReport {
    let cfg = ReplicaSimConfig {
        replica,
        workload,
        limits: WorkLimits::default(),
        sample_interval_s: 1.0,
        max_concurrency: None,
    };
    let report = ReplicaSim::new(cfg).unwrap().run();
    assert_eq!(report.verdict, Verdict::Completed);
    assert_eq!(report.finished, report.arrived);
    report
}

/// One request alone on the one-at-a-time replica: (TTFT, E2E) = (prefill step, service time).
fn alone() -> (f64, f64) {
    let r = replica_run(
        one_at_a_time(),
        constant_workload(Arrival::Trace { times: vec![0.0] }, 1.0, 1),
    );
    let q = &r.requests[0];
    (
        q.first_token.unwrap() - q.arrival,
        q.finish.unwrap() - q.arrival,
    )
}

/// Time-average over [0, t_end) of the number of intervals [a, d) open, read on a grid of
/// cell midpoints `dt` apart. Each interval's length is counted to within one cell, so the
/// result is within dt / (mean interval length) of the exact integral, relatively.
fn grid_mean(intervals: &[(f64, f64)], t_end: f64, dt: f64) -> f64 {
    let mut starts: Vec<f64> = intervals.iter().map(|iv| iv.0).collect();
    let mut ends: Vec<f64> = intervals.iter().map(|iv| iv.1).collect();
    starts.sort_by(f64::total_cmp);
    ends.sort_by(f64::total_cmp);
    let cells = (t_end / dt).ceil() as usize;
    let (mut i, mut j) = (0, 0);
    let mut sum = 0u64;
    for k in 0..cells {
        let t = (k as f64 + 0.5) * dt;
        while i < starts.len() && starts[i] <= t {
            i += 1;
        }
        while j < ends.len() && ends[j] <= t {
            j += 1;
        }
        sum += (i - j) as u64;
    }
    sum as f64 * dt / t_end
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (n, s) = xs.fold((0u64, 0.0), |(n, s), x| (n + 1, s + x));
    s / n as f64
}

/// Erlang C: the probability of waiting in M/M/c at offered load a = λS (a < c).
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut below = 0.0;
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        below += term;
    }
    let top = term * a / c as f64 * c as f64 / (c as f64 - a);
    top / (below + top)
}

/// Exact M/D/c: (probability of waiting, mean wait) at utilisation ρ and service time s.
///
/// Every request in service at time t has left by t + s, and every request waiting at t or
/// arriving in (t, t + s] is still there, so the number in the system at multiples of s is a
/// Markov chain: Q' = max(Q − c, 0) + Poisson(λs) (Crommelin's embedding). Its stationary law
/// is the time-stationary law of the queue, so by PASTA P(wait) = P(Q ≥ c), and
/// Wq = E[(Q − c)+] / λ by Little. Solved by iterating the chain on 0..400 (the tail beyond
/// is below 1e-30 at the loads used).
fn md_c(c: u32, rho: f64, s: f64) -> (f64, f64) {
    const N: usize = 400;
    let c = c as usize;
    let a = c as f64 * rho;
    let mut pk = vec![libm::exp(-a)];
    // Poisson(a) weights, to past the mode and down to 1e-40.
    while pk.len() < N && (pk.len() <= a as usize || *pk.last().unwrap() > 1e-40) {
        let k = pk.len() as f64;
        pk.push(pk.last().unwrap() * a / k);
    }
    let mut p = vec![0.0; N];
    p[0] = 1.0;
    let mut q = vec![0.0; N];
    for _ in 0..200_000 {
        q.iter_mut().for_each(|x| *x = 0.0);
        for (n, &pn) in p.iter().enumerate() {
            if pn == 0.0 {
                continue;
            }
            let base = n.saturating_sub(c);
            for (k, &w) in pk.iter().enumerate().take(N - base) {
                q[base + k] += pn * w;
            }
        }
        let total: f64 = q.iter().sum();
        let diff: f64 = p.iter().zip(&q).map(|(x, y)| (x - y / total).abs()).sum();
        for (x, y) in p.iter_mut().zip(&q) {
            *x = y / total;
        }
        if diff < 1e-15 {
            break;
        }
    }
    let p_wait = 1.0 - p[..c].iter().sum::<f64>();
    let lq: f64 = p
        .iter()
        .enumerate()
        .skip(c)
        .map(|(n, x)| (n - c) as f64 * x)
        .sum();
    (p_wait, lq / (a / s))
}

// ---------------------------------------------------------------------------------------------
// 4. A request alone: the service time the queueing tests rely on
// ---------------------------------------------------------------------------------------------

#[test]
fn a_request_alone_takes_one_prefill_step_and_its_decode_steps() {
    let replica = one_at_a_time();
    let cost = trainer_engine::replica::Replica::new(replica.clone())
        .unwrap()
        .cost_model()
        .clone();
    // The prefill step takes the request in: the CPU's cost of that is part of it.
    let mut first = BatchTotals::of(&[BatchItem {
        new_tokens: PROMPT,
        context_len: PROMPT,
    }]);
    first.admitted = 1;
    let prefill = cost.step_totals(&first).total_s;
    // Decode step j (1-based) computes the j-th sampled token's K and V: context P + j after.
    let decode: Vec<f64> = (1..OUTPUT)
        .map(|j| cost.decode_step(1, PROMPT + j).total_s)
        .collect();
    // Arriving at 5 s, not at zero, so that the times are offsets from an arbitrary start.
    let mut with_trace = replica;
    with_trace.trace_capacity = 16;
    let r = replica_run(
        with_trace,
        constant_workload(Arrival::Trace { times: vec![5.0] }, 10.0, 1),
    );
    let q = &r.requests[0];
    // Floating tolerance: a handful of additions of ~1e-2 s to 5 s, each within 1e-15 s.
    let tol = 1e-12;
    assert_eq!(q.admitted, Some(5.0), "an idle replica starts at once");
    assert!((q.first_token.unwrap() - 5.0 - prefill).abs() < tol);
    let e2e = prefill + decode.iter().sum::<f64>();
    assert!(
        (q.finish.unwrap() - 5.0 - e2e).abs() < tol,
        "{q:?} vs {e2e}"
    );
    // The trace shows the same steps back to back, each as long as the cost model says.
    let steps: Vec<f64> = r.trace.iter().map(|s| s.end - s.start).collect();
    assert_eq!(steps.len(), OUTPUT as usize);
    for (got, want) in steps.iter().zip(std::iter::once(&prefill).chain(&decode)) {
        assert!((got - want).abs() < tol, "{steps:?}");
    }
    assert!(r.trace.windows(2).all(|w| w[1].start == w[0].end));
    // The helper the other tests use agrees.
    let (ttft, s) = alone();
    assert!((ttft - prefill).abs() < tol && (s - e2e).abs() < tol);
}

// ---------------------------------------------------------------------------------------------
// 2. M/D/1: one request at a time, Poisson arrivals
// ---------------------------------------------------------------------------------------------

#[test]
fn one_at_a_time_replica_is_md1_pollaczek_khinchine() {
    let (_, s) = alone();
    // 200,000 requests per load. Over 60 replications of M/D/1 with 40,000 requests the
    // relative standard deviation of the mean wait was 1.6 % at ρ 0.3, 2.3 % at 0.6 and 4.5 %
    // at 0.8, and of the fraction that waits 0.8 %, 0.6 % and 0.5 %; at 200,000 (÷ √5) that
    // is 0.7, 1.0 and 2.0 %, and 0.4, 0.3 and 0.25 %. Tolerances: about four of those.
    let cases = [(0.3, 0.03, 0.015), (0.6, 0.04, 0.015), (0.8, 0.08, 0.015)];
    println!("rho   Wq sim (ms)  Wq P-K (ms)  err     P(wait) sim  = rho");
    for (i, (rho, tol_w, tol_p)) in cases.into_iter().enumerate() {
        let n = 200_000.0;
        let rate = rho / s;
        let r = replica_run(
            one_at_a_time(),
            constant_workload(Arrival::Poisson { rate }, n / rate, 11 + i as u64),
        );
        // Service is deterministic: every request, waited or not, holds the replica for s.
        assert!(r.requests.iter().all(|q| {
            let held = q.finish.unwrap() - q.admitted.unwrap();
            (held - s).abs() < 1e-9
        }));
        // The wait before admission: arrival to the step that first schedules it.
        let waits: Vec<f64> = r
            .requests
            .iter()
            .map(|q| q.admitted.unwrap() - q.arrival)
            .collect();
        let wq = mean(waits.iter().copied());
        let pk = rho * s / (2.0 * (1.0 - rho));
        let p_wait = waits.iter().filter(|&&w| w > 1e-12).count() as f64 / waits.len() as f64;
        println!(
            "{rho:.1}   {:>10.3}  {:>11.3}  {:>+5.1} %  {p_wait:.4}",
            wq * 1e3,
            pk * 1e3,
            (wq / pk - 1.0) * 100.0
        );
        assert!(
            (wq / pk - 1.0).abs() < tol_w,
            "ρ {rho}: Wq {wq} vs P-K {pk}"
        );
        // M/M/1's ρS/(1 − ρ) is twice P-K: well outside the tolerance.
        assert!((wq / (2.0 * pk) - 1.0).abs() > 3.0 * tol_w);
        // Any M/G/1: an arrival waits exactly when the server is busy, P = ρ (PASTA).
        assert!(
            (p_wait / rho - 1.0).abs() < tol_p,
            "ρ {rho}: P(wait) {p_wait}"
        );
        assert_eq!(r.queue_delay.count, waits.len() as u64);
    }
}

#[test]
fn md_c_solver_matches_pollaczek_khinchine_at_c_1() {
    for rho in [0.3, 0.6, 0.8, 0.95] {
        let (p, w) = md_c(1, rho, 1.0);
        assert!((p - rho).abs() < 1e-9, "{p}");
        assert!((w / (rho / (2.0 * (1.0 - rho))) - 1.0).abs() < 1e-9, "{w}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. M/D/c: a fleet of one-at-a-time replicas
// ---------------------------------------------------------------------------------------------

/// `c` one-at-a-time replicas behind the seed gateway, with every hop that queues or varies
/// per request turned off, so the engines see the Poisson process shifted by a constant.
///
/// Off: the quota store (a single server: its queue would reshape the arrivals), the router's
/// decision time (the same), warm-connection misses to the replicas (state dependent), new
/// client connections and authentication cache misses (random per request; these would keep
/// the process Poisson but reorder it, and there is no need). Left on, and constant: half the
/// client round trip, the cached authentication, tokenising the 512-token prompt and the relay.
fn md_c_fleet(c: u32, rate: f64, duration_s: f64, seed: u64) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    cfg.traffic[0].workload = constant_workload(Arrival::Poisson { rate }, duration_s, seed);
    cfg.pools = vec![PoolConfig {
        replica: one_at_a_time(),
        ..PoolConfig::seed(c)
    }];
    cfg.quota.enabled = false;
    cfg.router.decision_s = 0.0;
    cfg.router.fixed_delay_s = 0.0;
    cfg.gateway.pool.connect_s = 0.0;
    cfg.gateway.auth_miss_fraction = 0.0;
    cfg.clients.regions[0].new_connection_fraction = 0.0;
    cfg.record_requests = true;
    cfg
}

/// Fewest outstanding requests, ties to the first at or after a pointer that moves on at
/// every decision, over replicas that each serve one request at a time. The fleet has no
/// central queue: a request that finds every replica busy waits in the queue of one replica.
/// With equal (deterministic) service times that is still exactly FCFS M/D/c: the replica
/// that took request n − c frees first, it holds the fewest requests, and the rotating
/// pointer lands on it. So the engine-side wait must match exact M/D/c.
#[test]
fn least_outstanding_fleet_of_one_at_a_time_replicas_is_md_c() {
    let (prefill, s) = alone();
    let c = 4;
    let cases = [(0.5, 0.10, 0.06), (0.8, 0.14, 0.04)];
    // 100,000 requests per load. Over 40 replications of M/D/4 (cyclic recursion) with
    // 40,000 requests the relative standard deviation of the mean wait was 3.7 % at ρ 0.5 and
    // 4.5 % at 0.8 (60,000), and of the fraction that waits 2.3 % and 1.3 %; at 100,000 that
    // is about 2.3 and 3.5 %, and 1.5 and 1.0 %. Tolerances: about three to four of those.
    println!("rho  P(wait) sim  M/D/c  Erlang C | Wq sim (ms)  M/D/c  M/M/c  M/M/c ÷ 2");
    for (i, (rho, tol_w, tol_p)) in cases.into_iter().enumerate() {
        let n = 100_000.0;
        let rate = c as f64 * rho / s;
        let mut sim = FleetSim::new(md_c_fleet(c, rate, n / rate, 21 + i as u64)).unwrap();
        sim.run();
        let report = sim.report();
        let recs = sim.records();
        assert_eq!(report.outcomes.completed, report.outcomes.arrived);
        assert!(recs.iter().all(|r| r.outcome == Outcome::Completed));
        // What is subtracted: the client's send to the engine's receipt is one constant.
        let hop = recs[0].engine_in - recs[0].sent;
        assert!(
            hop > 0.0
                && recs
                    .iter()
                    .all(|r| (r.engine_in - r.sent - hop).abs() < 1e-9)
        );
        // The wait at the engine: engine TTFT less the prefill step a request alone takes.
        let waits: Vec<f64> = recs.iter().map(|r| r.engine_ttft() - prefill).collect();
        assert!(waits.iter().all(|&w| w > -1e-9));
        let wq = mean(waits.iter().copied());
        let p_wait = waits.iter().filter(|&&w| w > 1e-9).count() as f64 / waits.len() as f64;
        // The fleet's own engine queue clock (admitted − engine receives) agrees.
        assert!((report.clocks.engine_queue.mean - wq).abs() < 1e-6);
        let (p_exact, w_exact) = md_c(c, rho, s);
        let a = c as f64 * rho;
        let p_erlang = erlang_c(c, a);
        let w_mmc = p_erlang * s / (c as f64 * (1.0 - rho));
        println!(
            "{rho:.1}  {p_wait:>11.4}  {p_exact:.4}  {p_erlang:.4}   | {:>11.3}  {:.3}  {:.3}  {:.3}",
            wq * 1e3,
            w_exact * 1e3,
            w_mmc * 1e3,
            w_mmc * 0.5e3
        );
        assert!(
            (p_wait / p_exact - 1.0).abs() < tol_p,
            "ρ {rho}: P(wait) {p_wait} vs {p_exact}"
        );
        assert!(
            (wq / w_exact - 1.0).abs() < tol_w,
            "ρ {rho}: Wq {wq} vs {w_exact}"
        );
        // M/M/c's wait (Erlang C) is 1.75 to 1.9 times M/D/c's here: far outside.
        assert!((wq / w_mmc - 1.0).abs() > 3.0 * tol_w);
    }
}

/// The argument above in one check: with equal service times, round robin (blind to load)
/// and fewest-outstanding give every request the same wait, request by request.
#[test]
fn with_deterministic_service_round_robin_waits_exactly_as_least_outstanding() {
    let (_, s) = alone();
    let rate = 4.0 * 0.8 / s;
    let waits = |policy: RoutingPolicy| {
        let mut cfg = md_c_fleet(4, rate, 20_000.0 / rate, 5);
        cfg.router.policy = policy;
        let mut sim = FleetSim::new(cfg).unwrap();
        sim.run();
        let mut w: Vec<(u64, f64)> = sim
            .records()
            .iter()
            .map(|r| (r.seq, r.engine_ttft()))
            .collect();
        w.sort_by_key(|x| x.0);
        w
    };
    let rr = waits(RoutingPolicy::RoundRobin);
    let lo = waits(RoutingPolicy::LeastOutstanding);
    assert_eq!(rr.len(), lo.len());
    // Floating tolerance only: the same steps, started at the same times.
    assert!(rr
        .iter()
        .zip(&lo)
        .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() < 1e-9));
    // Random routing is c independent M/D/1 queues at ρ 0.8: far longer waits.
    let rand = waits(RoutingPolicy::Random);
    let m = |w: &[(u64, f64)]| mean(w.iter().map(|x| x.1));
    assert!(m(&rand) > 2.0 * m(&lo), "{} vs {}", m(&rand), m(&lo));
}

// ---------------------------------------------------------------------------------------------
// 1. Little's law, L = λW, on every kind of run
// ---------------------------------------------------------------------------------------------

/// Cells per mean sojourn when integrating the number in the system from the records.
const CELLS_PER_W: f64 = 400.0;

/// Checks L = λW for one run, counted from time zero to the end of the drain (every request
/// has left, so there are no edge effects): λ = requests / T, W = the simulator's own mean
/// sojourn, and L two ways, each independent of W:
///
/// - integrated from the records' (arrival, departure) on a grid of cells W / 400 wide: each
///   sojourn is counted to within one cell, so L is within 1/400 of the exact integral,
///   relatively (a bound, not a statistical tolerance); allowed: 0.5 %, twice that;
/// - the simulator's own time-weighted mean, where it has one (kept from its event
///   bookkeeping, not from the records): exact up to rounding, so 1e-9.
fn check_little(name: &str, spans: &[(f64, f64)], t_end: f64, w_sim: f64, l_sim: Option<f64>) {
    let lambda = spans.len() as f64 / t_end;
    let little = lambda * w_sim;
    let dt = w_sim / CELLS_PER_W;
    let l_grid = grid_mean(spans, t_end, dt);
    let tol = 2.0 / CELLS_PER_W;
    println!(
        "{name:<28} n {:>6}  T {t_end:>7.1} s  λ {lambda:>6.2}/s  W {w_sim:>6.3} s  λW {little:>7.3}  L grid {l_grid:>7.3} ({:+.3} %, tol {:.2} %)",
        spans.len(),
        (l_grid / little - 1.0) * 100.0,
        tol * 100.0
    );
    assert!(
        (l_grid / little - 1.0).abs() < tol,
        "{name}: L {l_grid} vs λW {little}"
    );
    if let Some(l) = l_sim {
        assert!(
            (l / little - 1.0).abs() < 1e-9,
            "{name}: L {l} vs λW {little}"
        );
    }
}

fn check_replica_little(name: &str, cfg: ReplicaSimConfig) {
    let r = ReplicaSim::new(cfg).unwrap().run();
    assert_eq!(r.verdict, Verdict::Completed, "{name}");
    assert_eq!(r.finished, r.arrived);
    let spans: Vec<(f64, f64)> = r
        .requests
        .iter()
        .map(|q| (q.arrival, q.finish.unwrap()))
        .collect();
    check_little(
        name,
        &spans,
        r.sim_time_s,
        r.e2e.mean,
        Some(r.mean_in_system),
    );
}

#[test]
fn littles_law_on_replica_runs() {
    // The shipped seed scenario (6.25 req/s of 1,000 in, 250 out), five minutes.
    let mut seed = ReplicaScenario::builtin("replica-seed").unwrap().config;
    seed.workload.duration_s = 300.0;
    check_replica_little("replica-seed", seed.clone());
    // Chat sessions: four turns, each resending the history, lognormal replies.
    let mut chat = ReplicaScenario::builtin("replica-chat-prefix-cache")
        .unwrap()
        .config;
    chat.workload.duration_s = 300.0;
    check_replica_little("replica-chat-prefix-cache", chat);
    // Near saturation: 21 req/s keeps the batch at its 256-sequence cap and a queue of
    // seconds in front of it.
    let mut hot = seed.clone();
    hot.workload.arrival = Arrival::Poisson { rate: 21.0 };
    hot.workload.duration_s = 120.0;
    check_replica_little("seed at 21 req/s", hot);
    // One at a time at ρ 0.95: the longest queues relative to service.
    let (_, s) = alone();
    let rate = 0.95 / s;
    check_replica_little(
        "one at a time, rho 0.95",
        ReplicaSimConfig {
            replica: one_at_a_time(),
            workload: constant_workload(Arrival::Poisson { rate }, 20_000.0 / rate, 9),
            limits: WorkLimits::default(),
            sample_interval_s: 1.0,
            max_concurrency: None,
        },
    );
}

/// L = λW for the streams the gateway holds (gateway receives to last byte written).
fn check_fleet_little(name: &str, mut cfg: FleetConfig) {
    cfg.record_requests = true;
    let mut sim = FleetSim::new(cfg).unwrap();
    sim.run();
    let r = sim.report();
    let recs = sim.records();
    let regions = &sim.config().clients.regions;
    // A stream closes when its last byte is written: the client reads it half a round trip
    // later.
    let spans: Vec<(f64, f64)> = recs
        .iter()
        .map(|x| {
            let half_rtt = regions[x.region as usize].rtt_s / 2.0;
            (x.gateway_in, x.last_byte_at_client - half_rtt)
        })
        .collect();
    assert_eq!(spans.len() as u64, r.outcomes.arrived);
    assert_eq!(r.streams.closed, r.streams.opened);
    // The report's mean stream time covers the streams that opened before the horizon; a
    // request sent just before it can open its stream just after. So W for the whole run
    // is from the records, and checked against the report's over the streams it covers.
    let h = r.horizon_s;
    let durations = |pick: &dyn Fn(&(f64, f64)) -> bool| {
        mean(spans.iter().filter(|s| pick(s)).map(|s| s.1 - s.0))
    };
    let w_report = durations(&|s| s.0 < h);
    assert!(
        (w_report / r.streams.mean_stream_s - 1.0).abs() < 1e-6,
        "{name}"
    );
    let w = durations(&|_| true);
    let t_end = spans.iter().map(|s| s.1).fold(0.0, f64::max);
    check_little(name, &spans, t_end, w, None);
    // The report's time-weighted open streams stops at the horizon, so it misses the part of
    // each stream still open then: add that back from the records and it is λW over the
    // whole run (exact up to the fleet's nanosecond rounding of each stream).
    let overhang: f64 = spans.iter().map(|s| (s.1 - s.0.max(h)).max(0.0)).sum();
    let l_all = (r.streams.open_mean * h + overhang) / t_end;
    let little = spans.len() as f64 / t_end * w;
    assert!(
        (l_all / little - 1.0).abs() < 1e-6,
        "{name}: {l_all} vs {little}"
    );
    // And the live counter behind the open-streams series matches the records at every
    // sample instant.
    for p in &r.series {
        let open = spans.iter().filter(|s| s.0 <= p.t && p.t < s.1).count() as u32;
        assert_eq!(open, p.open_streams, "{name} at {}", p.t);
    }
}

#[test]
fn littles_law_on_fleet_runs() {
    let mut seed = FleetConfig::seed();
    seed.truncate(60.0);
    check_fleet_little("fleet seed, 60 s", seed);
    let chat = trainer_engine::scenario::FleetScenario::builtin("fleet-chat-affinity").unwrap();
    for (arm, cfg) in &chat.arms {
        let mut cfg = cfg.clone();
        cfg.truncate(120.0);
        check_fleet_little(&format!("fleet-chat-affinity {arm}"), cfg);
    }
    let (_, s) = alone();
    let rate = 4.0 * 0.9 / s;
    check_fleet_little(
        "M/D/4 fleet, rho 0.9",
        md_c_fleet(4, rate, 20_000.0 / rate, 8),
    );
}
