//! The pieces pages repeat, one component per file. Each takes typed props (documented on the
//! prop) and sets its own `aria-*` attributes; the page passes text, signals and callbacks,
//! never markup to patch in.

mod card;
mod chart;
mod choice_field;
mod field_error;
mod link;
mod live_figure;
mod number_field;
mod param_field;

pub use card::Card;
pub use chart::{Chart, ChartData, Format, Line};
pub use choice_field::ChoiceField;
pub use link::Link;
pub use live_figure::LiveFigure;
pub use number_field::NumberField;
pub use param_field::{ParamField, ParamKind};
