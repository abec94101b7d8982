//! `/buildups/fleet`: one request through the fleet, hop by hop, on the lesson's
//! request-path diagram, with its clocks starting and stopping. The fleet runs in the
//! simulators' worker (`Job::FleetStory`), which reads the story once the run ends; with
//! `split=N` its pool prefills and N more replicas decode, and the engine step follows the
//! prompt, its KV cache over the link and the first decode.

use super::{player_steps, script, StepState};
use crate::components::{
    ChoiceField, EngineNote, FieldMessage, RecallCards, RequestPath, StepNarration, StepPlayer,
    UrlErrors,
};
use crate::sim_client::{control, submit, JobHandle};
use crate::sim_runner::RunStatus;
use crate::text::format;
use leptos::prelude::*;
use trainer_content::buildup::Script;
use trainer_course::buildup::fleet::{
    clock_text, replica_name, Clock, ClockState, FleetStory, Moment, MomentKind,
};
use trainer_course::buildup::Chapter;
use trainer_course::jobs::{self, Control, Job, Reply};
use trainer_engine::fleet::router::kv_usage;
use trainer_engine::fleet::{Outcome, RouteTrace};

/// A moment in a few words.
fn moment_label(k: MomentKind) -> &'static str {
    match k {
        MomentKind::Sent => "The client sends the request",
        MomentKind::AtGateway => "The gateway receives it and opens the stream",
        MomentKind::QuotaChecked => "The quota store answers: within budget",
        MomentKind::Refused => "Another tenant's request: 429 with Retry-After",
        MomentKind::Routed => "The router picks a replica",
        MomentKind::AtEngine => "The engine receives it",
        MomentKind::PrefillDone => "The prefill replica has computed the prompt",
        MomentKind::TransferStart => "The KV cache starts across the link",
        MomentKind::KvArrived => "The KV cache is on the decode replica",
        MomentKind::FirstToken => "The engine samples the first token",
        MomentKind::FirstByteWritten => "The gateway writes the first byte",
        MomentKind::FirstByteAtClient => "The first byte reaches the client",
        MomentKind::LastByte => "The last byte reaches the client",
        MomentKind::ScaleDecision => "The autoscaler asks for more replicas",
        MomentKind::ReplicaReady => "The new replicas are ready",
        MomentKind::Spilled => "A request goes down the overflow path",
        MomentKind::Nothing => "Nothing of the kind in this run",
    }
}

fn clock_name(c: Clock) -> &'static str {
    match c {
        Clock::EngineTtft => "Engine TTFT",
        Clock::ServerTtft => "Server TTFT",
        Clock::UserTtft => "User TTFT",
        Clock::GatewayItl => "ITL at the gateway",
        Clock::ClientItl => "ITL at the client",
    }
}

/// A clock as the diagram shows it under its hop, short enough for the box.
fn reading(c: Clock, s: ClockState) -> String {
    let name = match c {
        Clock::EngineTtft => "engine TTFT",
        Clock::ServerTtft => "server TTFT",
        Clock::UserTtft => "user TTFT",
        Clock::GatewayItl | Clock::ClientItl => "ITL",
    };
    match s {
        ClockState::NotStarted => format!("{name} –"),
        ClockState::Running { elapsed } => format!("{name} {}…", format::duration(elapsed, 3)),
        ClockState::Stopped { value } => format!("{name} {}", format::duration(value, 3)),
    }
}

#[component]
pub fn FleetBuildUp() -> impl IntoView {
    let script = StoredValue::new(script("fleet").unwrap_or(Script {
        title: String::new(),
        intro: String::new(),
        steps: Vec::new(),
    }));
    let story = RwSignal::new(None::<Result<FleetStory, String>>);
    let lasts = StoredValue::new(None::<Vec<usize>>);
    let url = StepState::install(
        move |k| lasts.with_value(|l| l.as_ref().and_then(|l| l.get(k).copied())),
        false,
    );
    let status = RwSignal::new(RunStatus::Idle);
    // Each split (from the page's choice, or Back to another) runs the fleet again in the
    // simulators' worker; a run still on its way is cancelled.
    let job = StoredValue::new(None::<JobHandle>);
    Effect::new(move |_| {
        let split = url.split.get();
        if let Some(h) = job.get_value() {
            control(h, Control::Cancel);
        }
        story.set(None);
        lasts.set_value(None);
        status.set(RunStatus::Running {
            run: 0,
            runs: 1,
            progress: 0.0,
        });
        let h = submit(Job::FleetStory { split }, move |reply| {
            let s = match reply {
                Reply::Progress(p) => {
                    let _ = status.try_set(RunStatus::Running {
                        run: 0,
                        runs: 1,
                        progress: p.progress,
                    });
                    return;
                }
                Reply::Done(jobs::Outcome::FleetStory(s)) => Ok(*s),
                Reply::Failed(m) => Err(m),
                _ => Err("The simulator's worker answered with something else.".to_string()),
            };
            if let Ok(s) = &s {
                lasts.set_value(Some(s.chapters.iter().map(|c| c.len() - 1).collect()));
                if let Some(m) = url.settle_with(|k| s.chapters.get(k).map(|c| c.len() - 1)) {
                    url.errors.update(|e| e.push(m));
                }
            }
            let _ = story.try_set(Some(s));
        });
        job.set_value(Some(h));
    });
    on_cleanup(move || {
        if let Some(Some(h)) = job.try_get_value() {
            control(h, Control::Cancel);
        }
    });
    let splits: Vec<(String, String)> = [0u32, 1, 2, 4]
        .iter()
        .map(|&n| {
            let label = match n {
                0 => "together, on every replica".to_string(),
                1 => "split: 1 decode replica beside them".to_string(),
                n => format!("split: {n} decode replicas beside them"),
            };
            (n.to_string(), label)
        })
        .collect();
    let steps = Signal::derive(move || {
        story.with(|s| match s {
            Some(Ok(s)) => script.with_value(|sc| player_steps(sc, &s.chapters)),
            _ => Vec::new(),
        })
    });
    let (title, intro) = script.with_value(|s| (s.title.clone(), s.intro.clone()));
    let body = move || match story.with(|s| s.as_ref().map(|r| r.as_ref().err().cloned())) {
        None => {
            let progress = move || match status.get() {
                RunStatus::Running { progress, .. } => {
                    format!("Running the fleet: {}", format::percent(progress))
                }
                _ => "Running the fleet".to_string(),
            };
            view! { <p class="buildup-running" data-testid="fleet-running" aria-live="polite">{progress}</p> }.into_any()
        }
        Some(Some(e)) => {
            view! { <p class="notice" role="alert" data-testid="run-error">{e}</p> }.into_any()
        }
        Some(None) => view! {
            <StepPlayer testid="player" steps=steps step=url.step sub=url.sub sub_label="Moment">
                <FleetFrame story=story url=url script=script/>
            </StepPlayer>
        }
        .into_any(),
    };
    view! {
        <section class="buildup" data-testid="page-buildup-fleet">
            <p class="eyebrow">"Build-up 2"</p>
            <h1>{title}</h1>
            <p class="lede">{intro}</p>
            <EngineNote testid="buildup-fleet-engine" engine=Signal::derive(FleetStory::engine)/>
            <UrlErrors errors=url.errors/>
            <div class="buildup-change">
                <ChoiceField
                    id="buildup-split"
                    testid="buildup-split"
                    label="Prefill and decode"
                    options=splits
                    selected=Signal::derive(move || url.split.get().to_string())
                    message=FieldMessage::never("buildup-split-error")
                    on_change=move |id: String| {
                        if let Ok(n) = id.parse::<u32>() {
                            url.split.set(n);
                        }
                    }
                />
            </div>
            {body}
            <div class="recall-list"><RecallCards place="buildups/fleet".to_string()/></div>
        </section>
    }
}

#[component]
fn FleetFrame(
    story: RwSignal<Option<Result<FleetStory, String>>>,
    url: StepState,
    script: StoredValue<Script>,
) -> impl IntoView {
    // The moment shown, with its chapter.
    let current = Memo::new(move |_| {
        let step = url.step.get();
        let sub = url.sub.get();
        story.with(|s| {
            let s = s.as_ref()?.as_ref().ok()?;
            let c = s.chapters.get(step)?;
            let m = s.moments.get((c.first + sub).min(c.last))?.clone();
            Some((c.clone(), m))
        })
    });
    // A clock hovered or focused lights its hop.
    let linked = RwSignal::new(None::<&'static str>);
    let highlight = Signal::derive(move || {
        linked
            .get()
            .or_else(|| current.with(|c| c.as_ref().map(|(_, m)| m.hop.id())))
    });
    let readings = Signal::derive(move || {
        current.with(|c| {
            let Some((_, m)) = c else { return Vec::new() };
            let mut out: Vec<(&'static str, String)> = Vec::new();
            for &(clock, state) in &m.clocks {
                let hop = clock.hop().id();
                let text = reading(clock, state);
                match out.iter_mut().find(|(h, _)| *h == hop) {
                    // The client shows its TTFT until its ITL starts.
                    Some(e) => {
                        if !matches!(state, ClockState::NotStarted) {
                            e.1 = text;
                        }
                    }
                    None => out.push((hop, text)),
                }
            }
            out
        })
    });
    let narration = move || {
        let (c, _) = current.get()?;
        Some(view! { <StepNarration script=script chapter=c/> })
    };
    let moment = move || {
        let (_, m) = current.get()?;
        Some(view! {
            <p class="buildup-frame-head" data-testid="moment" data-kind=format!("{:?}", m.kind)>
                {format!("{} · at {}", moment_label(m.kind), format::duration(m.t, 4))}
            </p>
        })
    };
    let clocks = move || {
        let (_, m) = current.get()?;
        Some(clock_table(&m, linked))
    };
    let extra = move || {
        let (c, _) = current.get()?;
        story.with(|s| {
            let s = s.as_ref()?.as_ref().ok()?;
            Some(match c.id.as_ref() {
                "gateway" => s.refused.as_ref().map(|x| {
                    let retry = match x.outcome {
                        Outcome::Rejected { retry_after_s, .. } => retry_after_s,
                        _ => 0,
                    };
                    view! {
                        <div class="buildup-panel refused" data-testid="refused">
                            <h3>{format!("Tenant {}: refused", x.tenant)}</h3>
                            <p><code>{format!("HTTP/1.1 429 Too Many Requests · Retry-After: {retry}")}</code></p>
                        </div>
                    }
                    .into_any()
                }),
                "router" => s.route.as_ref().map(|rt| candidates(rt, "candidates")),
                "engine" => split_panel(&c),
                "overflow" => s.spilled.as_ref().and_then(|(_, rt)| rt.as_ref()).map(|rt| candidates(rt, "spill-candidates")),
                "autoscaler" => s.scale_up.map(|e| {
                    view! {
                        <div class="buildup-panel" data-testid="scale-up">
                            <h3>"The scale-up"</h3>
                            <p data-testid="scale-replicas">{format!("{} → {} replicas", e.from, e.to)}</p>
                        </div>
                    }
                    .into_any()
                }),
                _ => None,
            })
            .flatten()
        })
    };
    view! {
        <div class="buildup-body">
            {narration}
            <div class="buildup-views">
                {moment}
                <RequestPath testid="fleet-diagram" highlight=highlight readings=readings/>
                {clocks}
                {extra}
            </div>
        </div>
    }
}

/// On split pools: the engine clock's reading in its parts, each with where it is spent.
fn split_panel(c: &Chapter) -> Option<AnyView> {
    c.figure("transfer")?;
    let part = |name: &'static str, label: String| {
        c.figure(name).map(|f| {
            view! {
                <tr data-testid=format!("split-{name}") data-value=f.value.to_string()>
                    <th scope="row">{label}</th>
                    <td class="num">{f.text.clone()}</td>
                </tr>
            }
        })
    };
    let text = |name: &str| c.figure(name).map_or_else(String::new, |f| f.text.clone());
    let (p, d) = (text("prefill_replica"), text("decode_replica"));
    let rows = vec![
        part("prefill_queue", format!("Queue on {p}")),
        part("prefill_time", format!("The prompt on {p}")),
        part("link_wait", "Connection and a free link".to_string()),
        part(
            "transfer",
            format!("The KV cache ({}) over {}", text("kv_bytes"), text("link")),
        ),
        part("decode_queue", format!("Queue on {d}")),
        part("first_decode", format!("The first decode step on {d}")),
        part("engine_ttft", "Engine TTFT, all of it".to_string()),
    ];
    Some(
        view! {
            <div class="buildup-panel" data-testid="split-path">
                <h3>"The engine clock, part by part"</h3>
                <table class="buildup-table"><tbody>{rows}</tbody></table>
            </div>
        }
        .into_any(),
    )
}

fn clock_table(m: &Moment, linked: RwSignal<Option<&'static str>>) -> AnyView {
    let rows = m
        .clocks
        .iter()
        .map(|&(c, st)| {
            let (state, value) = match st {
                ClockState::NotStarted => ("not_started", String::new()),
                ClockState::Running { elapsed } => ("running", elapsed.to_string()),
                ClockState::Stopped { value } => ("stopped", value.to_string()),
            };
            let hop = c.hop().id();
            view! {
                <tr
                    class=format!("clock-row {state}")
                    tabindex="0"
                    data-testid=format!("clock-{}", c.id())
                    data-state=state
                    data-value=value
                    on:mouseenter=move |_| linked.set(Some(hop))
                    on:mouseleave=move |_| linked.set(None)
                    on:focus=move |_| linked.set(Some(hop))
                    on:blur=move |_| linked.set(None)
                >
                    <th scope="row">{clock_name(c)}</th>
                    <td>{clock_text(st)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="buildup-panel">
            <h3>"The followed request's clocks"</h3>
            <table class="clock-table" data-testid="clocks"><tbody>{rows}</tbody></table>
        </div>
    }
    .into_any()
}

fn candidates(rt: &RouteTrace, testid: &'static str) -> AnyView {
    let rows = rt
        .candidates
        .iter()
        .map(|c| {
            let chosen = rt.chosen == Some(c.replica);
            view! {
                <tr class:chosen=chosen data-testid=format!("{testid}-{}", c.replica + 1) data-chosen=chosen.to_string()>
                    <td>{replica_name(c.replica)}{chosen.then_some(" ✓")}</td>
                    <td class="num">{c.load.running}</td>
                    <td class="num">{c.load.waiting}</td>
                    <td class="num" data-value=c.load.queued_prompt_tokens.to_string()>{format::int(c.load.queued_prompt_tokens as f64)}</td>
                    <td class="num">{format::percent(kv_usage(&c.load))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="buildup-panel">
            <h3>{format!("What the router saw at {}", format::duration(rt.t, 4))}</h3>
            <table class="buildup-table" data-testid=testid>
                <thead><tr><th>"Replica"</th><th class="num">"Running"</th><th class="num">"Waiting"</th><th class="num">"Queued prompt tokens"</th><th class="num">"KV used"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}
