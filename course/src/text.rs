//! The course's text toolkit: the engine's template filling and number formatting
//! ([`trainer_engine::text`], [`trainer_engine::format`]) and a scenario file's placeholders
//! ([`trainer_engine::scenario::words`]), in one place. The placeholders only the course can
//! resolve, because they read the calculator (`{fig QUESTION/STEP}`, `{input QUESTION/NAME}`),
//! are the sizing module's ([`crate::sizing::figure`]).

pub use trainer_engine::format;
pub use trainer_engine::scenario::words::scenario_figure;
pub use trainer_engine::text::*;
