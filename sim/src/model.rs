//! What a model gives the engine: tasks to spawn and a monitor that judges its history.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::Violation;

/// Which operations are scheduling points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grain {
    /// The real code's awaits and lock acquisitions (the level at which races are described).
    #[default]
    Await,
    /// Every atomic load, store and read-modify-write too.
    Access,
}

impl Grain {
    pub fn name(self) -> &'static str {
        match self {
            Grain::Await => "await",
            Grain::Access => "access",
        }
    }
}

/// A model, built for one variant and one set of parameters. `start` runs inside each run: it
/// creates the model's state and primitives, spawns its tasks, and returns its monitor.
pub trait Model: Send + Sync {
    fn start(&self) -> Rc<dyn Monitor>;

    /// Which operations are scheduling points for this model's parameters.
    fn grain(&self) -> Grain {
        Grain::Await
    }

    /// Whether every piece of state two tasks share goes through engine objects (locks,
    /// channels, notifies, atomics, `sync::Shared`, the history), so that partial-order
    /// reduction sees every dependency. Models that share plain `RefCell`s between tasks must
    /// say no: DFS then explores them without reduction.
    fn reduction_safe(&self) -> bool {
        false
    }

    /// Whether, beyond `reduction_safe`, every value two tasks share lives in an engine object
    /// (none in a `RefCell` guarded by convention), no task reads the virtual clock, and each
    /// `sim::checkpoint` names all of its task's locals. DFS with visited states then identifies a state by its values
    /// rather than by its trace (see `rt::state`).
    fn state_visible(&self) -> bool {
        false
    }
}

/// Judges the end state of a run (invariants also judge events as they happen, in `History`).
pub trait Monitor {
    fn at_quiescence(&self) -> Option<Violation>;
}
