//! The pieces pages repeat, one component per file. Each takes typed props (documented on the
//! prop) and sets its own `aria-*` attributes; the page passes text, signals and callbacks,
//! never markup to patch in.

mod card;
mod chart;
mod choice_field;
mod column_heads;
mod confidence_note;
mod countdown;
mod deferred;
mod engine_note;
mod estimate_box;
mod field_error;
mod figure;
mod hidden_figure;
mod inputs_banner;
mod link;
mod narration;
mod notes_box;
mod number_field;
mod param_field;
mod path_link;
mod precision_notes;
mod recall_card;
mod request_path;
mod roofline_plot;
mod spec_sweep;
mod step_narration;
mod step_player;
mod url_errors;

pub use card::Card;
pub use chart::{Chart, ChartData, Format, Frame, Line};
pub use choice_field::ChoiceField;
pub use column_heads::ColumnHeads;
pub use confidence_note::ConfidenceNote;
#[cfg(feature = "test-exports")]
pub use countdown::set_speed as set_clock_speed;
pub use countdown::Countdown;
pub use deferred::{lazy_region, lazy_turn, next_task, set_in_turn, when_drawn, Deferred};
pub use engine_note::EngineNote;
pub use estimate_box::{Compared, EstimateBox, SimFigure};
pub use field_error::{FieldError, FieldMessage};
pub use figure::{DerivedAt, Figure};
pub use hidden_figure::HiddenFigure;
pub use inputs_banner::InputsBanner;
pub use link::Link;
pub use narration::Narration;
pub use notes_box::NotesBox;
pub use number_field::NumberField;
pub use param_field::{ParamField, ParamKind};
pub use path_link::PathLink;
pub use precision_notes::PrecisionNotes;
pub use recall_card::{RecallCard, RecallCards};
pub use request_path::RequestPath;
pub use roofline_plot::RooflinePlot;
pub use spec_sweep::{SpecSweep, SweepSetup};
pub use step_narration::StepNarration;
pub use step_player::{PlayerStep, StepPlayer};
pub use url_errors::{link_sentence, UrlErrors};
