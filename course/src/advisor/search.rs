//! The search itself: which runs to do next, and what their reports say.

use super::{base, combinations, enumerate, Candidate, Point, Pruned, Settings, Space};
use crate::lab::{Knob, Setup};
use serde::{Deserialize, Serialize};
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetSim};

/// Where a candidate's search stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Short runs: `fails` is the largest count known to miss (or the floor less one), `holds`
    /// the smallest known to hold.
    Short { fails: u32, holds: Option<u32> },
    /// A longer run at `replicas` is due.
    Confirm { replicas: u32 },
    /// Found: the smallest count that held the short runs and, if confirmed, the count that
    /// held the longer run (`None`: no count up to the most allowed held).
    Done {
        short: Option<u32>,
        confirmed: Option<u32>,
    },
}

/// A candidate at the count it needs, for the plots: `*_beaten_by` is the index (in the
/// same list) of a point better on both of that plot's axes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrontierPoint {
    pub candidate: usize,
    pub replicas: u32,
    pub point: Point,
    pub cost_beaten_by: Option<usize>,
    pub speed_beaten_by: Option<usize>,
}

/// One run the search asks for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub candidate: usize,
    pub replicas: u32,
    pub horizon_s: f64,
}

/// A search in progress (see the module's documentation).
#[derive(Clone, Debug)]
pub struct Search {
    pub space: Space,
    pub candidates: Vec<Candidate>,
    pub pruned: Vec<Pruned>,
    setups: Vec<Setup>,
    pub stages: Vec<Stage>,
    /// Every run done, in the order recorded.
    pub points: Vec<Point>,
    /// Candidates sent to a longer run (or runs) already.
    tried: Vec<bool>,
}

impl Search {
    /// The search of `space`: its candidates enumerated and pruned, no run done yet. Refuses a
    /// base the lab cannot read, an unknown knob, an axis with no values or bad limits.
    pub fn new(space: Space) -> Result<Search, String> {
        Search::varied(space, |_| {})
    }

    /// [`Search::new`] with every run's fleet changed by `vary` before anything is read from
    /// it (the arithmetic's pruning and floor included): another engine, the traffic scaled,
    /// other seeds. A moment checks that its ranking survives these.
    pub fn varied(space: Space, vary: impl Fn(&mut FleetConfig)) -> Result<Search, String> {
        if !(1..=256).contains(&space.max_replicas) {
            return Err(format!(
                "max_replicas: must be 1 to 256, got {}",
                space.max_replicas
            ));
        }
        for (name, s) in [("short_s", space.short_s), ("confirm_s", space.confirm_s)] {
            if !(s.is_finite() && (1.0..=86_400.0).contains(&s)) {
                return Err(format!("{name}: must be 1 to 86,400 seconds, got {s}"));
            }
        }
        let t = &space.targets;
        if !(t.ttft_s.is_finite() && t.ttft_s > 0.0 && t.tpot_s.is_finite() && t.tpot_s > 0.0) {
            return Err("targets: must be positive".into());
        }
        let mut base = base(&space)?;
        // The source's fleet too, so the knobs the candidates set replay onto the varied one.
        vary(&mut base.base);
        vary(&mut base.config);
        let found = enumerate(&space, &base)?;
        let n = found.candidates.len();
        let stages = found
            .candidates
            .iter()
            .map(|c| Stage::Short {
                fails: c.floor.replicas - 1,
                holds: None,
            })
            .collect();
        Ok(Search {
            space,
            candidates: found.candidates,
            pruned: found.pruned,
            setups: found.setups,
            stages,
            points: Vec::new(),
            tried: vec![false; n],
        })
    }

    /// The set-up of candidate `i` at `replicas`: what the lab opens for that point.
    pub fn setup(&self, i: usize, replicas: u32) -> Setup {
        let mut s = self.setups[i].clone();
        // A count within 1..=256 on a valid set-up: the knob takes it.
        let _ = s.set(knob("replicas"), &replicas.to_string());
        s
    }

    /// The fleet a run simulates.
    pub fn fleet(&self, run: &RunSpec) -> FleetConfig {
        let mut cfg = self.setup(run.candidate, run.replicas).config;
        let mut shorter = cfg.clone();
        if knob("duration")
            .set(&mut shorter, &crate::lab::knobs::num(run.horizon_s))
            .is_ok()
            && shorter.validate().is_ok()
        {
            cfg = shorter;
        }
        cfg
    }

    /// The runs due now, one per candidate still searching; empty when the search is done.
    /// They are independent: a driver may run them in any order, in parallel.
    pub fn pending(&mut self) -> Vec<RunSpec> {
        let mut out = self.due();
        if out.is_empty() {
            self.confirm_more();
            out = self.due();
        }
        out
    }

    fn due(&self) -> Vec<RunSpec> {
        let max = self.space.max_replicas;
        self.stages
            .iter()
            .enumerate()
            .filter_map(|(i, st)| {
                let (replicas, horizon_s) = match *st {
                    Stage::Short { fails, holds } => (
                        match holds {
                            None => {
                                let floor = self.candidates[i].floor.replicas;
                                if fails < floor {
                                    floor
                                } else {
                                    (2 * fails).min(max)
                                }
                            }
                            Some(h) => fails + (h - fails) / 2,
                        },
                        self.space.short_s,
                    ),
                    Stage::Confirm { replicas } => (replicas, self.space.confirm_s),
                    Stage::Done { .. } => return None,
                };
                Some(RunSpec {
                    candidate: i,
                    replicas,
                    horizon_s,
                })
            })
            .collect()
    }

    /// Reads the report of a run [`Search::pending`] asked for, and moves its candidate on.
    pub fn record(&mut self, run: RunSpec, report: &FleetReport) {
        let i = run.candidate;
        let Some(c) = self.candidates.get(i) else {
            return;
        };
        let point = Point::read(
            i,
            c,
            run.replicas,
            run.horizon_s,
            &self.space.targets,
            report,
        );
        let holds = point.holds;
        self.points.push(point);
        let max = self.space.max_replicas;
        self.stages[i] = match self.stages[i] {
            Stage::Short {
                fails,
                holds: known,
            } => {
                let (fails, known) = if holds {
                    (fails, Some(run.replicas))
                } else {
                    (run.replicas.max(fails), known)
                };
                match known {
                    Some(h) if h - fails <= 1 => Stage::Done {
                        short: Some(h),
                        confirmed: None,
                    },
                    None if fails >= max => Stage::Done {
                        short: None,
                        confirmed: None,
                    },
                    _ => Stage::Short {
                        fails,
                        holds: known,
                    },
                }
            }
            Stage::Confirm { replicas } => {
                let short = self.short_count(i);
                if holds {
                    Stage::Done {
                        short,
                        confirmed: Some(replicas),
                    }
                } else if replicas >= max {
                    Stage::Done {
                        short,
                        confirmed: None,
                    }
                } else {
                    Stage::Confirm {
                        replicas: replicas + 1,
                    }
                }
            }
            done => done,
        };
    }

    fn short_count(&self, i: usize) -> Option<u32> {
        self.points
            .iter()
            .filter(|p| p.candidate == i && p.horizon_s == self.space.short_s && p.holds)
            .map(|p| p.replicas)
            .min()
    }

    /// After the short runs: the `confirm` cheapest candidates that held, not yet tried, get a
    /// longer run, while one of them could still beat the cheapest confirmed (a longer run
    /// only ever adds replicas, so a candidate whose short count already costs as much cannot).
    fn confirm_more(&mut self) {
        let bar = self
            .best()
            .map(|(i, n)| self.candidates[i].dollars_per_hour(n));
        let mut found: Vec<(usize, u32)> = self
            .stages
            .iter()
            .enumerate()
            .filter(|&(i, _)| !self.tried[i])
            .filter_map(|(i, st)| match st {
                Stage::Done { short: Some(n), .. } => Some((i, *n)),
                _ => None,
            })
            .filter(|&(i, n)| bar.is_none_or(|b| self.candidates[i].dollars_per_hour(n) < b))
            .collect();
        found.sort_by(|a, b| self.order(*a, self.space.short_s, *b));
        for &(i, n) in found.iter().take(self.space.confirm) {
            self.tried[i] = true;
            self.stages[i] = Stage::Confirm { replicas: n };
        }
    }

    /// Whether every run is done.
    pub fn done(&mut self) -> bool {
        self.pending().is_empty()
    }

    /// Each candidate's count: the confirmed one where there is one, the short runs' otherwise.
    pub fn count(&self, i: usize) -> Option<u32> {
        match self.stages[i] {
            Stage::Done { short, confirmed } => confirmed.or(short),
            _ => None,
        }
    }

    /// The cheapest confirmed candidate and its count (ties: the lower TTFT of its confirming
    /// run, then the first).
    pub fn best(&self) -> Option<(usize, u32)> {
        let confirmed = |i: usize| match self.stages[i] {
            Stage::Done {
                confirmed: Some(n), ..
            } => Some(n),
            _ => None,
        };
        (0..self.candidates.len())
            .filter_map(|i| confirmed(i).map(|n| (i, n)))
            .min_by(|a, b| self.order(*a, self.space.confirm_s, *b))
    }

    /// Cheaper first; at the same cost, the one further inside the targets in its run of
    /// `horizon_s` at that count; then the first enumerated.
    fn order(&self, a: (usize, u32), horizon_s: f64, b: (usize, u32)) -> std::cmp::Ordering {
        let cost = |(i, n): (usize, u32)| self.candidates[i].dollars_per_hour(n);
        let miss = |(i, n): (usize, u32)| {
            self.points
                .iter()
                .find(|p| p.candidate == i && p.replicas == n && p.horizon_s == horizon_s)
                .map_or(f64::INFINITY, |p| p.miss(self))
        };
        cost(a)
            .total_cmp(&cost(b))
            .then(miss(a).total_cmp(&miss(b)))
            .then(a.0.cmp(&b.0))
    }

    /// The run that decided candidate `i` at `replicas` (the longest, if it ran twice).
    pub fn run_at(&self, i: usize, replicas: u32) -> Option<&Point> {
        self.points
            .iter()
            .filter(|p| p.candidate == i && p.replicas == replicas)
            .max_by(|a, b| a.horizon_s.total_cmp(&b.horizon_s))
    }

    /// Every candidate that held at some count, at that count, with what beats it on each
    /// plot: cost per million output tokens against TTFT (both smaller is better), and output
    /// tokens a second per GPU against tokens a second per user (both larger is better).
    pub fn frontier(&self) -> Vec<FrontierPoint> {
        let found: Vec<(usize, u32, Point)> = (0..self.candidates.len())
            .filter_map(|i| {
                let n = self.count(i)?;
                Some((i, n, self.run_at(i, n)?.clone()))
            })
            .collect();
        let cost: Vec<(f64, f64)> = found
            .iter()
            .map(|(_, _, p)| (p.ttft_s, p.dollars_per_million))
            .collect();
        let speed: Vec<(f64, f64)> = found
            .iter()
            .map(|(_, _, p)| (-p.tokens_per_user_s, -p.tokens_per_gpu_s))
            .collect();
        found
            .into_iter()
            .enumerate()
            .map(|(k, (candidate, replicas, point))| FrontierPoint {
                candidate,
                replicas,
                point,
                cost_beaten_by: super::dominated_by(&cost, k),
                speed_beaten_by: super::dominated_by(&speed, k),
            })
            .collect()
    }

    /// Runs every pending run here, one after another, until the search is done.
    pub fn run_here(&mut self) -> Result<(), String> {
        loop {
            let runs = self.pending();
            if runs.is_empty() {
                return Ok(());
            }
            for run in runs {
                let report = simulate(self.fleet(&run))?;
                self.record(run, &report);
            }
        }
    }
}

fn knob(key: &str) -> Knob {
    Knob::from_key(key).expect("a knob of the lab's table")
}

fn simulate(cfg: FleetConfig) -> Result<FleetReport, String> {
    let mut sim = FleetSim::new(cfg).map_err(|e| e.to_string())?;
    sim.run();
    Ok(sim.report())
}

/// The search's answer without pruning or its count search: every combination the lab accepts
/// run at every count from one up to the first that holds, at the short horizon (`None` when
/// none up to the most holds, or the lab refuses the combination), in enumeration order. The
/// tests hold the search to it on small spaces.
pub fn exhaustive(space: &Space) -> Result<Vec<(Settings, Option<u32>)>, String> {
    let base = base(space)?;
    let mut out = Vec::new();
    for (settings, setup) in combinations(space, &base)? {
        let Ok(setup) = setup else {
            out.push((settings, None));
            continue;
        };
        let candidate = Candidate {
            settings: settings.clone(),
            gpus_per_replica: setup.config.pools[0].replica.deployment.tp,
            gpu_hour_price: 0.0,
            floor: super::Floor {
                replicas: 1,
                capacity_tok_s: 0.0,
                demand_tok_s: 0.0,
            },
        };
        let search = Search {
            space: space.clone(),
            candidates: vec![candidate],
            pruned: Vec::new(),
            setups: vec![setup],
            stages: Vec::new(),
            points: Vec::new(),
            tried: vec![true],
        };
        let mut smallest = None;
        for n in 1..=space.max_replicas {
            let run = RunSpec {
                candidate: 0,
                replicas: n,
                horizon_s: space.short_s,
            };
            let report = simulate(search.fleet(&run))?;
            let c = &search.candidates[0];
            if Point::read(0, c, n, space.short_s, &space.targets, &report).holds {
                smallest = Some(n);
                break;
            }
        }
        out.push((settings, smallest));
    }
    Ok(out)
}
