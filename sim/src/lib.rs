//! braid's engine: a deterministic, controlled executor on madsim. A model is ordinary async
//! Rust whose tasks share state through the primitives in [`sync`]; every operation on them is
//! a scheduling point, and a [`Scheduler`](strategy::Scheduler) — not madsim — picks which task
//! runs at each one. Runs are judged by [`invariant`]s over the model's [`History`].

#![warn(missing_docs)]

pub mod audit;
pub mod check;
mod digest;
pub mod distinct;
pub mod env_overrides;
pub mod explore;
pub mod fault;
pub mod history;
pub mod invariant;
pub mod mark;
pub mod model;
pub mod node;
pub mod ops;
pub mod render;
pub mod replay_file;
mod rt;
pub mod run;
pub mod scenario;
pub mod schedule;
pub mod shrink;
pub mod strategy;
pub mod summary_file;
pub mod sync;
pub mod task;
pub mod time;
pub mod trace;
mod vocab;

use serde::{Deserialize, Serialize};

pub use history::History;
pub use model::{Grain, Model, Monitor};
pub use ops::{
    checkpoint, choose, choose_in_poll, current_poll, current_task, current_task_name,
    engine_running, watch, yield_like_tokio, yield_now, yield_point,
};
pub use rt::model_task::{spawn, spawn_member};
pub use rt::step_bound::LONG_RUN_FACTOR;
pub use rt::symmetry::Member;
pub use run::{run_once, RunConfig, RunOutcome, RunResult, SIMULATED};
pub use schedule::{Decision, Divergence};
pub use vocab::{Name, TaskId};

/// A broken invariant: which one, what happened, and at which step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The broken invariant's name.
    pub invariant: String,
    /// What the invariant said: what went wrong, in the model's words.
    pub message: String,
    /// How many steps the run had taken when it broke.
    pub step: usize,
}
