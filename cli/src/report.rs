//! Exploration reports: the summary file's types are the engine's (`sim::summary_file`, so a
//! test writing one shard's summary writes the same format); their text for people is here.

mod text;

pub use sim::summary_file::*;
pub use text::RenderText;
