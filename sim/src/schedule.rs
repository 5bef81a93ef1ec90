//! Schedules: the decisions of one run, by stable task name, and how a replay can diverge.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One decision of a run: which task took the next step, or which value a `choose` drew.
/// Serialised as `"router:p1"` or `{"choose": 1}` so a replay file reads like a story. A task's
/// name is shared, not copied, by every decision that names it: a run records one per step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Decision {
    Task(Arc<str>),
    Choice { choose: usize },
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Task(name) => write!(f, "{name}"),
            Decision::Choice { choose } => write!(f, "choose {choose}"),
        }
    }
}

/// A replayed schedule that no longer fits the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// The step at which the recorded decision could not be followed.
    pub step: usize,
    /// What the schedule recorded there ("end of schedule" when it ran out).
    pub expected: String,
    /// What the model offered instead.
    pub found: String,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "diverged at step {}: the schedule says {}, the model offers {}",
            self.step, self.expected, self.found
        )
    }
}

impl std::error::Error for Divergence {}
