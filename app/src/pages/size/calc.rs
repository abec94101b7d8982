//! The calculator of one question: the inputs panel, the steps revealed one at a time, the
//! verdict, and the sections that build on them (simulator check, drills, sensitivity).

use super::drill::Drills;
use super::misfit::MisfitBanner;
use super::sensitivity::Sensitivity;
use super::simcheck::{words, SimCheckPanel, SpecCheck};
use super::state::Calc;
use crate::components::{lazy_region, Deferred, Link, RecallCards};
use crate::components::{ChoiceField, FieldMessage, NumberField, PrecisionNotes, UrlErrors};
use crate::route::Route;
use crate::text::fill;
use leptos::prelude::*;
use trainer_course::sizing::{
    is_preset_figure, precision_notes, InputGroup, InputKind, InputSpec, Inputs, Pressure,
    Question, Step,
};
use trainer_engine::catalog::{Dtype, WeightFormat};
use trainer_engine::error::sentence;

/// Reveals the next step and brings it into view when it lands below the fold.
fn next_step(c: Calc) {
    c.next();
    request_animation_frame(|| {
        let Some(w) = web_sys::window() else { return };
        let last = w
            .document()
            .and_then(|d| d.query_selector(".steps > li:last-child").ok().flatten());
        let height = w
            .inner_height()
            .ok()
            .and_then(|h| h.as_f64())
            .unwrap_or(0.0);
        if let Some(el) = last {
            if el.get_bounding_client_rect().bottom() > height {
                el.scroll_into_view_with_bool(false);
            }
        }
    });
}

/// Whether a key event comes from a control that uses keys itself (a field, a list, an
/// editable region): its arrow keys belong to it, never to the page's step navigation.
fn from_control(ev: &web_sys::KeyboardEvent) -> bool {
    use wasm_bindgen::JsCast;
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            let tag = el.tag_name().to_ascii_lowercase();
            let role = el.get_attribute("role").unwrap_or_default();
            matches!(tag.as_str(), "input" | "select" | "textarea" | "option")
                || el
                    .closest("[contenteditable]:not([contenteditable='false'])")
                    .ok()
                    .flatten()
                    .is_some()
                || matches!(
                    role.as_str(),
                    "listbox"
                        | "combobox"
                        | "slider"
                        | "spinbutton"
                        | "textbox"
                        | "radiogroup"
                        | "menu"
                        | "tablist"
                )
        })
}

/// Whether the screen is wide enough for the inputs beside the steps (the CSS breakpoint).
fn wide_screen() -> bool {
    web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .is_none_or(|w| w > 860.0)
}

#[component]
pub fn Calculator(q: Question) -> impl IntoView {
    view! {
        <section class="size" data-testid=format!("page-size-{}", q.id())>
            <p class="eyebrow"><Link to=Route::SizeIndex testid="size-index">"Size it up"</Link></p>
            <h1>{q.title()}</h1>
            <p class="lede size-prompt">{q.prompt()}</p>
            // The calculator's state (the inputs read from the URL, the derivation) is set up
            // in a region of its own: on the first page, the heading is drawn in the task the
            // module starts in and the state a slice later.
            <Deferred><CalculatorBody q=q/></Deferred>
        </section>
    }
}

/// Everything below the calculator's heading and prompt.
#[component]
fn CalculatorBody(q: Question) -> impl IntoView {
    let c = Calc::new(q, wide_screen());
    // The right arrow reveals the next step, unless it was pressed in a control that uses
    // arrow keys itself (the model list, a field).
    let handle = window_event_listener(leptos::ev::keydown, move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "ArrowRight"
            && !ev.alt_key()
            && !ev.ctrl_key()
            && !ev.meta_key()
            && !ev.shift_key()
            && !from_control(&ev)
        {
            ev.prevent_default();
            next_step(c);
        }
    });
    on_cleanup(move || handle.remove());

    let others = Question::ALL
        .into_iter()
        .filter(|o| *o != q)
        .map(|o| {
            view! { <li><Link to=Route::Size(o.id().into()) testid=format!("other-{}", o.id())>{o.title()}</Link></li> }
        })
        .collect_view();

    view! {
        <UrlErrors errors=Signal::derive(move || c.link_errors.get_value())/>
        <MisfitBanner c=c/>
        <div class="size-layout">
            <InputsPanel c=c/>
            <div class="size-main">
                <Deferred><StepsPanel c=c/></Deferred>
            </div>
        </div>
        // Below the inputs, the page is drawn a slice at a time (see `Deferred`), from a
        // piece of the module of its own.
        <Deferred>{lazy_region(below(c))}</Deferred>
        <Deferred>
            <nav class="size-others" aria-label="Other questions">
                <h2>"Other questions"</h2>
                <ul>{others}</ul>
            </nav>
        </Deferred>
    }
}

/// What the chosen number formats change and may cost in quality, from the cost model at the
/// inputs (a piece of the module of its own: most learners never leave BF16).
#[lazy]
fn precision(c: Calc) -> AnyView {
    let notes = Memo::new(move |_| c.inputs.with(precision_notes));
    view! { <PrecisionNotes testid="precision" notes=notes/> }.into_any()
}

/// What the calculator shows below its inputs and steps, a piece of the module of its own:
/// the simulator check (the fleet question's, the speculation question's sweep or the host
/// tiers the host-memory question runs; it brings the fleet simulator's set-up and the
/// engine note), the sensitivity table and the drills, none of which the inputs and the steps
/// need.
#[lazy]
fn below(c: Calc) -> AnyView {
    // This piece also carries the derivations the first load leaves out.
    if !trainer_course::sizing::speculation_ready() {
        trainer_course::sizing::enable_speculation();
        c.linked.set(true);
    }
    view! {
        {matches!(c.q, Question::Fleet | Question::HalveCost | Question::Split).then(|| view! { <Deferred><SimCheckPanel c=c/></Deferred> })}
        {(c.q == Question::Speculation).then(|| view! { <Deferred><SpecCheck c=c/></Deferred> })}
        {(c.q == Question::Host).then(|| view! { <Deferred><super::host_check::HostCheck c=c/></Deferred> })}
        {(c.q == Question::Roofline).then(|| view! { <Deferred><super::roofline::RooflineSection c=c/></Deferred> })}
        <Deferred><Sensitivity c=c/></Deferred>
        <Deferred><Drills c=c/></Deferred>
        <Deferred><div class="recall-list"><RecallCards place=format!("size/{}", c.q.id())/></div></Deferred>
    }
    .into_any()
}

/// Every input, grouped, with units and inline messages.
#[component]
fn InputsPanel(c: Calc) -> impl IntoView {
    let q = c.q;
    let groups = [
        (InputGroup::Workload, "Workload"),
        (InputGroup::Model, "Model"),
        (InputGroup::Hardware, "Hardware"),
        (InputGroup::Engine, "Engine"),
        (InputGroup::Memory, "Memory"),
        (InputGroup::Money, "Money"),
    ];
    // The specs depend on the choices (a preset's figures are the defaults), so the panel
    // re-renders when a choice changes, not on every keystroke.
    let choices = Memo::new(move |_| {
        c.inputs.with(|i| {
            (
                i.model().to_string(),
                i.gpu().to_string(),
                i.weight_format(),
                i.kv_dtype(),
            )
        })
    });
    let panel = move || {
        choices.track();
        let specs = c.inputs.with_untracked(|i| i.specs(q));
        groups
            .into_iter()
            .filter_map(|(g, title)| {
                let fields: Vec<InputSpec> =
                    specs.iter().filter(|s| s.group == g).cloned().collect();
                if fields.is_empty() {
                    return None;
                }
                // A preset's own figures (the model's shape, the GPU's datasheet) sit folded
                // under their chooser; they open when one of them is custom or wrong.
                let (preset, main): (Vec<InputSpec>, Vec<InputSpec>) =
                    fields.into_iter().partition(|s| is_preset_figure(s.name));
                let open = preset.iter().any(|s| {
                    c.errors.with_untracked(|e| e.contains_key(s.name))
                        || c.inputs.with_untracked(|i| !i.is_default(q, s.name))
                });
                let what = if g == InputGroup::Model { "the model's shape" } else { "the GPU's datasheet" };
                let folded = (!preset.is_empty()).then(|| {
                    let n = preset.len();
                    let preset = preset
                        .into_iter()
                        .map(|s| view! { <Field c=c spec=s/> })
                        .collect_view();
                    view! {
                        <details class="preset-figures" open=open data-testid=format!("figures-{}", title.to_ascii_lowercase())>
                            <summary>{format!("{n} figures from {what}")}</summary>
                            {preset}
                        </details>
                    }
                });
                let main = main
                    .into_iter()
                    .map(|s| view! { <Field c=c spec=s/> })
                    .collect_view();
                // Each group is a region of its own on the first page (`Deferred`): the fleet
                // question's fields, built at once, were a task of some 35 ms unthrottled.
                Some(view! {
                    <Deferred>
                        <fieldset class="input-group">
                            <legend>{title}</legend>
                            {main}
                            {folded}
                        </fieldset>
                    </Deferred>
                })
            })
            .collect_view()
    };
    let general = move || {
        let names: Vec<&'static str> = c
            .inputs
            .with(|i| i.specs(q).iter().map(|s| s.name).collect());
        let other: Vec<String> = c.errors.with(|e| {
            e.iter()
                .filter(|(k, _)| !names.contains(&k.as_str()))
                .map(|(k, m)| sentence(k, m))
                .collect()
        });
        (!other.is_empty()).then(|| view! { <p class="field-error" role="alert" data-testid="error-general">{other.join(" ")}</p> })
    };
    let reset = move |_| c.load(Inputs::defaults(q));
    // What the chosen number formats change, with their caveats: drawn from a piece of the
    // module of its own, fetched the first time a format other than BF16 is chosen.
    let fp8 = Memo::new(move |_| {
        c.inputs
            .with(|i| i.weight_format() != WeightFormat::Bf16 || i.kv_dtype() != Dtype::Bf16)
    });
    // One line that says what the folded panel holds (a phone shows the panel folded).
    let summary = move || {
        let w = words();
        let (inputs, changed) = c.inputs.with(|i| {
            let specs = i.specs(q);
            let changed = specs
                .iter()
                .filter(|s| s.kind != InputKind::Choice && !i.is_default(q, s.name))
                .count()
                + usize::from(i.model() != Inputs::defaults(q).model())
                + usize::from(i.gpu() != Inputs::defaults(q).gpu())
                + usize::from(i.weight_format() != Inputs::defaults(q).weight_format())
                + usize::from(i.kv_dtype() != Inputs::defaults(q).kv_dtype());
            (specs.len(), changed)
        });
        let errors = c.errors.with(|e| e.len());
        if errors > 0 {
            fill(
                &w.inputs_summary_errors,
                &[
                    ("inputs", inputs.to_string()),
                    ("errors", errors.to_string()),
                ],
            )
        } else {
            fill(
                &w.inputs_summary,
                &[
                    ("inputs", inputs.to_string()),
                    ("changed", changed.to_string()),
                ],
            )
        }
    };
    view! {
        <aside class="inputs-panel" aria-label="Inputs" data-testid="inputs">
            <details
                class="inputs-details"
                prop:open=move || c.inputs_open.get()
                on:toggle=move |ev| {
                    use wasm_bindgen::JsCast;
                    if let Some(d) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                        let open = d.has_attribute("open");
                        if open != c.inputs_open.get_untracked() {
                            c.inputs_open.set(open);
                        }
                    }
                }
            >
                <summary class="inputs-head" data-testid="inputs-toggle">
                    <h2>"Inputs"</h2>
                    <span class="inputs-summary muted" data-testid="inputs-summary">{summary}</span>
                </summary>
                <button class="link-button reset-inputs" data-testid="reset-inputs" on:click=reset>"Reset to the question"</button>
                {general}
                {panel}
                {move || fp8.get().then(|| lazy_region(precision(c)))}
            </details>
        </aside>
    }
}

/// One input: a preset chooser or a number field with its unit and message.
#[component]
fn Field(c: Calc, spec: InputSpec) -> impl IntoView {
    let name = spec.name;
    let label = spec.label;
    let id = format!("in-{name}");
    let testid = format!("input-{name}");
    let error = Signal::derive(move || c.error(name).map(|m| sentence(label, &m)));
    let message = FieldMessage::new(error, format!("err-{name}")).testid(format!("error-{name}"));
    if spec.kind == InputKind::Choice {
        let selected = Signal::derive(move || {
            c.inputs.with(|i| match name {
                "model" => i.model().to_string(),
                "gpu" => i.gpu().to_string(),
                "weight_dtype" => i.weight_format().name().to_string(),
                _ => i.kv_dtype().name().to_string(),
            })
        });
        let options = spec
            .options
            .iter()
            .map(|o| (o.id.clone(), o.label.clone()))
            .collect();
        return view! {
            <ChoiceField
                id=id
                testid=testid
                label=label
                options=options
                selected=selected
                message=message
                on_change=move |v: String| c.choose(name, &v)
            />
        }
        .into_any();
    }
    let q = c.q;
    let kind = spec.kind;
    let custom = Signal::derive(move || c.inputs.with(|i| !i.is_default(q, name)));
    let spec_for_input = spec.clone();
    view! {
        <NumberField
            id=id
            testid=testid
            label=label
            unit=spec.field_unit()
            value=Signal::derive(move || c.text(name))
            hint=spec.range_text()
            integer=kind == InputKind::Integer
            message=message
            custom=custom
            on_input=move |t: String| c.type_into(&spec_for_input, t)
        >
            <button
                class="reset-field"
                type="button"
                title="Back to the preset's value"
                aria-label=format!("Reset {label} to its default")
                data-testid=format!("reset-{name}")
                on:click=move |_| c.reset_field(name, kind)
                hidden=move || !custom.get()
            >"↺"</button>
        </NumberField>
    }
    .into_any()
}

/// The steps, the controls that reveal them, and the verdict.
#[component]
fn StepsPanel(c: Calc) -> impl IntoView {
    let total = move || c.step_count();
    let shown = move || c.shown();
    let done = move || total() > 0 && shown() >= total();
    let steps = move || {
        let n = shown();
        c.good.with(|g| {
            g.as_ref().map(|(_, d)| {
                d.steps
                    .iter()
                    .take(n)
                    .enumerate()
                    .map(|(i, s)| step_view(i, s))
                    .collect_view()
            })
        })
    };
    let verdict = move || {
        if !done() {
            return None;
        }
        c.good.with(|g| {
            g.as_ref().map(|(_, d)| {
                let readings = d
                    .verdict
                    .readings
                    .iter()
                    .map(|r| {
                        let (class, word) = match r.pressure {
                            Pressure::Binding => ("binding", "binds"),
                            Pressure::Secondary => ("secondary", "secondary"),
                            Pressure::Slack => ("slack", "slack"),
                        };
                        view! {
                            <li class=format!("reading {class}") data-testid=format!("reading-{:?}", r.limit).to_ascii_lowercase()>
                                <span class="pressure">{word}</span>
                                <strong>{r.limit.label()}</strong>
                                <span class="reason">{r.reason.clone()}</span>
                            </li>
                        }
                    })
                    .collect_view();
                view! {
                    <section class="verdict" data-testid="verdict" aria-live="polite">
                        <h3>"Verdict"</h3>
                        <p class="verdict-summary" data-testid="verdict-summary" title=d.verdict.summary.clone()>{d.verdict.headline.clone()}</p>
                        <ul class="readings">{readings}</ul>
                    </section>
                }
            })
        })
    };
    let next_label = move || {
        let (n, t) = (shown(), total());
        if t > 0 && n >= t {
            "All steps shown".to_string()
        } else if n == 0 {
            "Start: first step".to_string()
        } else {
            format!("Next step ({} of {t})", n + 1)
        }
    };
    view! {
        <div class="steps-panel">
            <div class="steps-controls" role="group" aria-label="Reveal steps">
                <button class="button primary" data-testid="next-step" disabled=done on:click=move |_| next_step(c)>
                    {next_label}
                </button>
                <button class="button" data-testid="show-all" disabled=done on:click=move |_| c.reveal_all()>"Show all"</button>
                <button class="button" data-testid="start-over" disabled=move || shown() == 0 on:click=move |_| c.reveal_to(0)>"Start over"</button>
                <span class="muted steps-count" data-testid="steps-count" aria-live="polite">
                    {move || format!("{} of {} steps", shown(), total())}
                </span>
            </div>
            <p class="hint muted" data-testid="steps-tip">{words().steps_tip.clone()}</p>
            {move || c.stale().then(|| view! {
                <p class="stale-note" role="status" data-testid="stale">
                    "Some inputs need fixing: the steps below are the last good result, not your current inputs."
                </p>
            })}
            <ol class="steps" class:stale=move || c.stale() data-testid="steps">{steps}</ol>
            {move || (shown() == 0).then(|| view! {
                <p class="steps-empty muted">"Nothing revealed yet. Press “Start” or the right arrow key for the first step."</p>
            })}
            {verdict}
        </div>
    }
}

fn step_view(i: usize, s: &Step) -> impl IntoView {
    let class = match s.check {
        Some(true) => "step check pass",
        Some(false) => "step check fail",
        None => "step",
    };
    let badge = s.check.map(|ok| {
        view! { <span class="check-badge" data-testid=format!("check-{}", s.id)>{if ok { "✓ passes" } else { "✗ fails" }}</span> }
    });
    view! {
        <li class=class id=format!("step-{}", s.id) data-testid=format!("step-{}", s.id) data-value=format!("{}", s.value)>
            <div class="step-head">
                <span class="step-n" aria-hidden="true">{i + 1}</span>
                <h3 class="step-label">{s.label}</h3>
                <span class="step-value" data-testid=format!("value-{}", s.id)>{s.display.clone()}</span>
                {badge}
            </div>
            <div class="formula">
                <code class="symbols">{s.formula.clone()}</code>
                <code class="numbers">{format!("= {}", s.substituted)}</code>
            </div>
            <p class="why">{s.why.clone()}</p>
        </li>
    }
}
