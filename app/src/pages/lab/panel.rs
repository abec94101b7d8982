//! The lab's parameter panel: the preset and arm, every knob by section, and the import box.

use super::state::Lab;
use crate::components::{
    ChoiceField, Deferred, FieldMessage, ParamField, ParamKind, PrecisionNotes,
};
use crate::text::format::num;
use leptos::prelude::*;
use trainer_course::lab::{preset_names, Kind, Knob, LabText, Section, Source};
use trainer_course::precision;

/// How many knobs' fields one region of the first page draws.
const KNOBS_PER_REGION: usize = 4;

#[component]
pub fn Panel(lab: Lab, text: LabText) -> impl IntoView {
    let options = || -> Vec<(String, String)> {
        preset_names()
            .unwrap_or_default()
            .iter()
            .map(|p| {
                let kind = if p.replica { " (one replica)" } else { "" };
                (p.id.clone(), format!("{}{kind}", p.title))
            })
            .chain(std::iter::once((
                "file".to_string(),
                "Imported scenario file".to_string(),
            )))
            .collect()
    };
    let preset_id = Signal::derive(move || {
        lab.setup.with(|s| match &s.source {
            Source::Preset { id, .. } => id.clone(),
            Source::File { .. } => "file".into(),
        })
    });
    let arms = Memo::new(move |_| {
        lab.setup.with(|s| {
            s.preset
                .arms
                .iter()
                .map(|(n, _)| (n.clone(), n.clone()))
                .collect::<Vec<_>>()
        })
    });
    let arm = Signal::derive(move || lab.setup.with(|s| s.arm().to_string()));
    let on_preset = move |id: String| {
        if id == "file" {
            return;
        }
        let _ = lab.open_source(Source::Preset {
            id,
            arm: String::new(),
        });
    };
    let on_arm = move |arm: String| {
        let source = lab.setup.with_untracked(|s| match &s.source {
            Source::Preset { id, .. } => Source::Preset {
                id: id.clone(),
                arm,
            },
            Source::File { text, .. } => Source::File {
                text: text.clone(),
                arm,
            },
        });
        let _ = lab.open_source(source);
    };
    let description = move || lab.setup.with(|s| s.preset.description.clone());
    let replica_note = text.replica_note.clone();
    let is_replica = move || lab.setup.with(|s| s.preset.replica);
    let section_text = StoredValue::new(text.section.clone());
    let section = move |sec: Section| {
        // A few knobs per region on the first page (`Deferred`): a section's fields, built
        // at once, were a task of 20 to 30 ms unthrottled, most of it compiling the code
        // they run for the first time.
        let knobs: Vec<Knob> = Knob::ALL
            .into_iter()
            .filter(|k| k.section() == sec)
            .collect();
        let fields = knobs
            .chunks(KNOBS_PER_REGION)
            .map(|chunk| {
                let chunk = chunk.to_vec();
                view! {
                    <Deferred>
                        {chunk.into_iter().map(|k| view! { <KnobField lab=lab knob=k/> }).collect_view()}
                    </Deferred>
                }
            })
            .collect_view();
        let help = section_text.with_value(|t| LabText::of(t, sec.id()).to_string());
        // The replica's number formats, each with what it changes and its caveat.
        let precision = (sec == Section::Replica).then(|| {
            let notes = Memo::new(move |_| {
                lab.setup.with(|s| {
                    let r = &s.config.pools[0].replica;
                    precision::notes(&r.deployment, &r.efficiency, &r.memory).unwrap_or_default()
                })
            });
            view! { <PrecisionNotes testid="lab-precision" notes=notes/> }
        });
        view! {
            <details class="lab-section" open data-testid=format!("lab-section-{}", sec.id())>
                <summary>{sec.label()}</summary>
                <p class="muted small">{help}</p>
                <div class="lab-fields">{fields}</div>
                {precision}
            </details>
        }
    };
    // Each section of knobs is a region of its own on the first page (`Deferred`).
    let sections = Section::ALL
        .into_iter()
        .map(|sec| view! { <Deferred>{section(sec)}</Deferred> })
        .collect_view();
    view! {
        <section class="lab-panel" aria-labelledby="lab-panel-h" data-testid="lab-panel">
            <h2 id="lab-panel-h">"Set-up"</h2>
            <div class="lab-fields">
                <ChoiceField
                    id="lab-preset"
                    testid="lab-preset"
                    label="Preset"
                    options=options()
                    selected=preset_id
                    message=FieldMessage::new(Signal::derive(move || lab.error("preset")), "lab-preset-error")
                    on_change=on_preset
                />
                {move || {
                    let opts = arms.get();
                    (opts.len() > 1).then(|| view! {
                        <ChoiceField
                            id="lab-arm"
                            testid="lab-arm"
                            label="Arm"
                            options=opts
                            selected=arm
                            message=FieldMessage::new(Signal::derive(move || lab.error("arm")), "lab-arm-error")
                            on_change=on_arm
                        />
                    })
                }}
                // No arm to choose: a link that names one still hears why it was not used.
                {move || arms.with(|a| a.len() <= 1).then(|| lab.error("arm")).flatten().map(|m| view! { <p class="field-error" data-testid="lab-arm-error">{m}</p> })}
            </div>
            <p class="muted small" data-testid="lab-description">{description}</p>
            {move || is_replica().then(|| view! { <p class="muted small" data-testid="lab-replica-note">{replica_note.clone()}</p> })}
            {move || lab.error("query").map(|m| view! { <p class="field-error" data-testid="lab-query-error">{m}</p> })}
            {move || lab.error("pin").map(|m| view! { <p class="field-error" data-testid="lab-pin-error">{m}</p> })}
            {move || lab.error("file").map(|m| if m == trainer_course::lab::READING {
                // A TOML file the worker is reading for the page: a status, not a fault.
                view! { <p class="muted small" role="status" data-testid="lab-file-reading">{m}</p> }.into_any()
            } else {
                view! { <p class="field-error" data-testid="lab-file-error">{m}</p> }.into_any()
            })}
            {sections}
            <Deferred><Import lab=lab/></Deferred>
        </section>
    }
}

/// One knob's field.
#[component]
fn KnobField(lab: Lab, knob: Knob) -> impl IntoView {
    let label = Memo::new(move |_| lab.setup.with(|s| knob.label(&s.config)));
    let unit = Memo::new(move |_| lab.setup.with(|s| knob.unit(&s.config)));
    let kind = Memo::new(move |_| {
        lab.setup.with(|s| match knob.kind() {
            Kind::Number { integer, min, max } => ParamKind::Number {
                integer,
                hint: format!("{} to {}", num(min), num(max)),
            },
            Kind::Choice | Kind::Toggle => ParamKind::Choice(knob.options(&s.config)),
        })
    });
    let enabled = Memo::new(move |_| lab.setup.with(|s| knob.applies(&s.config)));
    let custom = Memo::new(move |_| lab.setup.with(|s| knob.get(&s.config) != knob.get(&s.base)));
    view! {
        <ParamField
            key=knob.key()
            label=label
            unit=unit
            kind=kind
            value=Signal::derive(move || lab.text(knob))
            error=Signal::derive(move || lab.error(knob.key()))
            enabled=enabled
            custom=custom
            on_change=move |t: String| lab.type_into(knob, t)
        />
    }
}

/// Import a scenario file by file picker or by pasting its text.
#[component]
fn Import(lab: Lab) -> impl IntoView {
    let pasted = RwSignal::new(String::new());
    let on_file = move |ev: leptos::ev::Event| {
        crate::browser::read_picked_file(&ev, move |text| match text {
            Ok(t) => lab.import(t),
            Err(m) => lab.import_error.set(Some(m)),
        });
    };
    view! {
        <details class="lab-import" data-testid="lab-import">
            <summary>"Import a scenario file (TOML or JSON, as the command line reads)"</summary>
            <label class="field">
                <span>"From a file"</span>
                <input type="file" accept=".toml,.json,text/plain,application/json" data-testid="lab-import-file" on:change=on_file/>
            </label>
            <label class="field" for="lab-import-text">"Or paste it"</label>
            <textarea
                id="lab-import-text"
                rows="6"
                data-testid="lab-import-text"
                spellcheck="false"
                aria-invalid=move || lab.import_error.with(Option::is_some).to_string()
                aria-describedby=move || lab.import_error.with(|e| e.as_ref().map(|_| "lab-import-error"))
                prop:value=move || pasted.get()
                on:input=move |ev| pasted.set(event_target_value(&ev))
            ></textarea>
            <button class="button" data-testid="lab-import-run"
                disabled=move || lab.reading.get()
                data-state=move || if lab.reading.get() { "reading" } else { "ready" }
                on:click=move |_| lab.import(pasted.get_untracked())>
                {move || if lab.reading.get() { "Reading the file…" } else { "Import and run" }}
            </button>
            {move || lab.import_error.get().map(|m| view! {
                <p class="field-error" id="lab-import-error" data-testid="lab-import-error">{m}</p>
            })}
        </details>
    }
}
