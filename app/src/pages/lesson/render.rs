//! Draws a content document: blocks as HTML, directives as live figures and widgets.

use super::{dashboard, estimate, probe, reversal, sheet, Lesson};
use crate::components::{
    lazy_turn, Deferred, DerivedAt, Figure, HiddenFigure, Link, RecallCard, RequestPath,
    RooflinePlot,
};
use crate::route::Route;
use leptos::prelude::*;
use trainer_content::doc::{Block, Inline};
use trainer_course::sizing::Question;

/// How many of a document's first blocks are drawn with the page; the rest are drawn a slice
/// at a time after it ([`Deferred`]), so a long document does not block the main thread.
const DRAWN_AT_ONCE: usize = 2;

/// The blocks of a document, in order.
pub fn blocks(blocks: &[Block], lesson: Lesson) -> AnyView {
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if i < DRAWN_AT_ONCE {
                block(b, lesson)
            } else {
                let b = b.clone();
                view! { <Deferred>{block(&b, lesson)}</Deferred> }.into_any()
            }
        })
        .collect_view()
        .into_any()
}

fn block(b: &Block, lesson: Lesson) -> AnyView {
    match b {
        Block::Heading { level, id, text } => {
            let t = inlines(text, lesson);
            let id = id.clone();
            match level {
                2 => view! { <h2 id=id>{t}</h2> }.into_any(),
                3 => view! { <h3 id=id>{t}</h3> }.into_any(),
                _ => view! { <h4 id=id>{t}</h4> }.into_any(),
            }
        }
        Block::Paragraph { text } => view! { <p>{inlines(text, lesson)}</p> }.into_any(),
        Block::List { ordered, items } => {
            let items = items
                .iter()
                .map(|i| view! { <li>{inlines(i, lesson)}</li> })
                .collect_view();
            if *ordered {
                view! { <ol>{items}</ol> }.into_any()
            } else {
                view! { <ul>{items}</ul> }.into_any()
            }
        }
        Block::Table { head, rows } => {
            let head = head
                .iter()
                .map(|c| view! { <th scope="col">{inlines(c, lesson)}</th> })
                .collect_view();
            let rows = rows
                .iter()
                .map(|r| {
                    let cells = r
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            if i == 0 {
                                view! { <th scope="row">{inlines(c, lesson)}</th> }.into_any()
                            } else {
                                view! { <td>{inlines(c, lesson)}</td> }.into_any()
                            }
                        })
                        .collect_view();
                    view! { <tr>{cells}</tr> }
                })
                .collect_view();
            view! {
                <div class="table-wrap">
                    <table class="lesson-table"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>
                </div>
            }
            .into_any()
        }
        Block::Aside { blocks: inner } => {
            view! { <aside class="takeaway">{blocks(inner, lesson)}</aside> }.into_any()
        }
        Block::Widget { kind, args } => {
            let (kind, args) = (kind.clone(), args.clone());
            // The widgets share one piece: each is set up and built at its own turn.
            lazy_turn(__preload_widgets(), move || widgets(kind, args, lesson))
        }
    }
}

/// The lesson's widgets are a piece of the module of their own: they bring the calculator's
/// estimate boxes, the simulators' set-up, the engine note and the diagrams, which the text
/// around them does not need, so the lesson's first screen does not wait for them.
#[lazy]
fn widgets(kind: String, args: Vec<String>, lesson: Lesson) -> AnyView {
    // This piece also carries the follow-up questions' derivations (the roofline's figures).
    if !trainer_course::sizing::speculation_ready() {
        trainer_course::sizing::enable_speculation();
        lesson.link();
    }
    widget(&kind, &args, lesson)
}

fn widget(kind: &str, args: &[String], lesson: Lesson) -> AnyView {
    match (kind, args) {
        ("estimate", [q, step]) => match Question::from_id(q) {
            Some(q) => view! { <estimate::Estimate q=q step=step.clone()/> }.into_any(),
            None => unknown(kind, args),
        },
        ("diagram", [d]) if d == "request-path" => {
            view! { <RequestPath testid="diagram-request-path"/> }.into_any()
        }
        ("probe", [id]) => view! { <probe::ProbeRun id=id.clone()/> }.into_any(),
        ("dashboard", []) => view! { <dashboard::DashboardRun/> }.into_any(),
        ("reversal", []) => view! { <reversal::Reversal/> }.into_any(),
        ("roofline", []) => roofline(lesson),
        ("recall", [id]) => match trainer_course::recall::prompt(id) {
            Some(p) => view! { <RecallCard prompt=p/> }.into_any(),
            None => unknown(kind, args),
        },
        ("cheatsheet", []) => view! { <sheet::CheatSheet/> }.into_any(),
        ("verdict", [q]) => match Question::from_id(q) {
            Some(q) => verdict(q, lesson),
            None => unknown(kind, args),
        },
        _ => unknown(kind, args),
    }
}

/// The roofline plot at the learner's roofline inputs, held back while one of the roofline
/// estimates is open (its points give them away).
fn roofline(lesson: Lesson) -> AnyView {
    let hidden = Memo::new(move |_| lesson.pending_for(Question::Roofline));
    let data = Signal::derive(move || {
        if hidden.get() {
            return None;
        }
        trainer_course::sizing::roofline_plot(&lesson.inputs(Question::Roofline)).ok()
    });
    let words = crate::pages::size::plot_words();
    (move || {
        if hidden.get() {
            let w = lesson.words.get_value();
            view! { <p class="muted" data-testid="lesson-roofline-hidden">{w.roofline_waiting}</p> }
                .into_any()
        } else {
            view! { <RooflinePlot data=data words=words testid="lesson-roofline"/> }.into_any()
        }
    })
    .into_any()
}

/// The derivation's verdict at the learner's inputs: which limit sets the answer and which
/// have room, each with its figure (held back while an estimate it would give away is open).
fn verdict(q: Question, lesson: Lesson) -> AnyView {
    let testid = format!("verdict-{}", q.id());
    (move || {
        // The roofline's verdict reads the fleet's count back: it waits for the fleet's too.
        if lesson.pending_for(q) || (q == Question::Roofline && lesson.pending_for(Question::Fleet)) {
            let w = lesson.words.get_value();
            return view! { <p class="muted" data-testid=format!("{testid}-hidden")>{w.sheet_hidden}</p> }
                .into_any();
        }
        match lesson.derivation(q) {
            Some(d) => view! { <p data-testid=testid.clone()>{d.verdict.summary.clone()}</p> }.into_any(),
            None => view! {
                <p class="live-fig missing" data-testid=testid.clone()>"—"</p>
            }
            .into_any(),
        }
    })
    .into_any()
}

/// A widget this build does not know: said plainly where it would have been.
fn unknown(kind: &str, args: &[String]) -> AnyView {
    view! {
        <p class="field-error" role="alert">
            {format!("This part of the lesson ({kind} {}) cannot be shown in this build.", args.join(" "))}
        </p>
    }
    .into_any()
}

/// Inline content, with live figures for the directives.
pub fn inlines(text: &[Inline], lesson: Lesson) -> AnyView {
    text.iter()
        .map(|i| inline(i, lesson))
        .collect_view()
        .into_any()
}

fn inline(i: &Inline, lesson: Lesson) -> AnyView {
    match i {
        Inline::Text { text } => text.clone().into_any(),
        Inline::Code { text } => view! { <code>{text.clone()}</code> }.into_any(),
        Inline::Strong { text } => view! { <strong>{inlines(text, lesson)}</strong> }.into_any(),
        Inline::Em { text } => view! { <em>{inlines(text, lesson)}</em> }.into_any(),
        Inline::Link { to, text } => link(to, inlines(text, lesson), lesson),
        Inline::Figure { question, step } => figure(question, step, lesson),
        Inline::Input { question, name } => input(question, name, lesson),
        Inline::Say { question, id } => say(question, id, lesson),
    }
}

/// A sentence the sizing engine chose from the figures at the learner's inputs
/// (`Derivation::said`), held back while the figure it judges gives away an open estimate.
fn say(question: &str, id: &str, lesson: Lesson) -> AnyView {
    let Some(q) = Question::from_id(question) else {
        return format!("[{question}/{id}?]").into_any();
    };
    let id = id.to_string();
    let testid = format!("say-{question}-{id}");
    (move || {
        let d = lesson.derivation(q);
        let Some(said) = d.as_ref().and_then(|d| d.said(&id)) else {
            return view! {
                <span class="live-fig missing" data-testid=testid.clone() title="Your inputs in the calculator do not derive; fix them there.">"—"</span>
            }
            .into_any();
        };
        if let Some(target) = lesson.hidden_by(q, said.step) {
            return hidden(testid.clone(), &target, lesson);
        }
        view! { <span data-testid=testid.clone() data-key=said.key>{said.text.clone()}</span> }
            .into_any()
    })
    .into_any()
}

/// An in-app link. A link to a step of a calculator opens it at the learner's inputs with
/// the steps up to that one revealed.
fn link(to: &str, text: AnyView, lesson: Lesson) -> AnyView {
    let (rest, fragment) = to.split_once('#').unwrap_or((to, ""));
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let route = Route::parse(path);
    let (query, fragment) = (query.to_string(), fragment.to_string());
    match &route {
        Route::Size(q) if query.is_empty() => {
            let q = Question::from_id(q);
            let step = fragment.strip_prefix("step-").map(str::to_string);
            // Read once: the stored inputs change only on the calculator's page.
            let query = match (q, &step) {
                (Some(q), Some(s)) => lesson.step_query(q, s),
                (Some(q), None) => lesson.query(q),
                _ => String::new(),
            };
            let testid = format!("link-{}", to.replace(['/', '#', '?', '='], "-"));
            view! { <Link to=route.clone() query=query fragment=fragment testid=testid>{text}</Link> }
                .into_any()
        }
        _ => {
            view! { <Link to=route.clone() query=query fragment=fragment>{text}</Link> }.into_any()
        }
    }
}

fn figure(question: &str, step: &str, lesson: Lesson) -> AnyView {
    let Some(q) = Question::from_id(question) else {
        return format!("[{question}/{step}?]").into_any();
    };
    let step = step.to_string();
    let testid = format!("fig-{question}-{step}");
    (move || {
        if let Some(target) = lesson.hidden_by(q, &step) {
            return hidden(testid.clone(), &target, lesson);
        }
        let d = lesson.derivation(q);
        match d.as_ref().and_then(|d| d.step(&step)) {
            Some(s) => view! {
                <Figure
                    testid=testid.clone()
                    value=s.value
                    shown=s.display.clone()
                    label=s.label
                    derived_at=DerivedAt {
                        to: Route::Size(q.id().into()),
                        query: lesson.step_query(q, &step),
                        fragment: format!("step-{step}"),
                    }
                    inline=true
                />
            }
            .into_any(),
            None => view! {
                <span class="live-fig missing" data-testid=testid.clone() title="Your inputs in the calculator do not derive; fix them there.">"—"</span>
            }
            .into_any(),
        }
    })
    .into_any()
}

fn input(question: &str, name: &str, lesson: Lesson) -> AnyView {
    let Some(q) = Question::from_id(question) else {
        return format!("[{question}/{name}?]").into_any();
    };
    let name = name.to_string();
    let testid = format!("input-{question}-{name}");
    (move || {
        let inputs = lesson.inputs(q);
        let spec = inputs.specs(q).into_iter().find(|s| s.name == name);
        let value = inputs.get(&name).unwrap_or(0.0);
        let shown = inputs
            .shown(q, &name)
            .unwrap_or_else(|| crate::text::format::num(value));
        let label = spec.map(|s| s.label).unwrap_or_default();
        view! {
            <span class="live-fig input-fig" data-testid=testid.clone() data-value=format!("{value}") title=label>
                <Link to=Route::Size(q.id().into()) query=lesson.query(q) aria_label=format!("{shown}: {label}, change it in the calculator")>
                    {shown.clone()}
                </Link>
            </span>
        }
    })
    .into_any()
}

/// The placeholder for a figure that would give away the answer to the open estimate box
/// `target` (its element id).
pub fn hidden(testid: String, target: &str, lesson: Lesson) -> AnyView {
    let w = lesson.words.get_value();
    let step = target.strip_prefix("estimate-").unwrap_or(target);
    let prompt = estimate::prompt(&w, step);
    let label = crate::text::fill(&w.hidden_figure_label, &[("prompt", prompt)]);
    view! { <HiddenFigure testid=testid text=w.hidden_figure.clone() label=label target=target.to_string()/> }
        .into_any()
}
