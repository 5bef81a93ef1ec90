//! What a model gives the engine: tasks to spawn and a monitor that judges its history.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::Violation;

/// Which operations are scheduling points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grain {
    /// The real code's awaits and lock acquisitions only: a coarser grain, chosen explicitly,
    /// that skips the races between atomic accesses (checked: see `explore::grain_check`).
    Await,
    /// Every operation on a braid primitive, every atomic load, store and read-modify-write
    /// included: the default, which cannot skip a race.
    #[default]
    Access,
}

impl Grain {
    /// The grain's name as scenario files and reports spell it: `await` or `access`.
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
    /// Builds the model inside a run: its state and primitives, its tasks spawned, and returns the
    /// monitor that judges the run's end.
    fn start(&self) -> Rc<dyn Monitor>;

    /// Which operations are scheduling points for this model's parameters: every operation on
    /// a braid primitive unless the model chooses the coarser `Grain::Await`.
    fn grain(&self) -> Grain {
        Grain::Access
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

    /// Whether its tasks run on stacks of their own, so that a synchronous operation (a
    /// `braid::std` atomic load, a facade `try_send`) is a scheduling point at access grain.
    /// Code written as async models (every access awaited) needs no stacks and runs faster
    /// without them; code written for tokio does.
    fn stackful_tasks(&self) -> bool {
        false
    }

    /// How many node crashes (see `node`) a run may decide: a scenario's `crashes = N`.
    fn crashes(&self) -> usize {
        0
    }

    /// How many faults (connection resets, partitions, lost datagrams; see `fault`) a run may
    /// inject at its fault sites.
    fn network_faults(&self) -> usize {
        0
    }

    /// How many times a run may jump virtual time to the next deadline while a task can still
    /// run (a slow task losing to its timeout, as on a real clock), each a decision counted as
    /// a preemption. 0: timers fire only when no task can run (tokio's paused clock).
    fn clock_jumps(&self) -> usize {
        0
    }

    /// Whether each poll of its tasks reaches at most one scheduling point and never drops a
    /// point it is waiting on: every task is one chain of awaits (a `select!` written as a
    /// `choose`, no `join!`, no `timeout`). Such a task can park right at its point and, when
    /// picked again at once, go on inside the same poll (loom's and shuttle's way), which is
    /// the same schedule as parking once the poll has returned, at less cost per step. A
    /// breach is caught: a second point in a poll after a park, or a parked point dropped,
    /// panics naming this declaration. Ignored for stackful tasks and runs that may crash.
    fn one_point_per_poll(&self) -> bool {
        false
    }

    /// The ids of the model's interchangeable tasks (publishers of one shape), each spawned
    /// with `sim::spawn_member` by the setup: same code, told apart only by the id they carry,
    /// which every value the engine digests hashes as a `sim::Member`, and invariants that
    /// treat them alike. A search by state (`state_visible`) then explores each state once per
    /// orbit (see `rt::symmetry`), and end states are counted one per orbit. Ignored on a
    /// model that may crash a node or strike a network fault.
    fn symmetric_members(&self) -> Vec<usize> {
        Vec::new()
    }
}

/// Judges the end state of a run (invariants also judge events as they happen, in `History`).
pub trait Monitor {
    /// Judges the run once no task can move: a violation (a lost message, a deadlock the model
    /// cares about) or `None`.
    fn at_quiescence(&self) -> Option<Violation>;
}

/// A model run at another grain: the grain check runs a coarse-grain model's schedules at
/// access grain.
pub struct AtGrain<'m> {
    /// The model, run unchanged except for its grain.
    pub model: &'m dyn Model,
    /// The grain to run it at.
    pub grain: Grain,
}

impl Model for AtGrain<'_> {
    fn start(&self) -> Rc<dyn Monitor> {
        self.model.start()
    }

    fn grain(&self) -> Grain {
        self.grain
    }

    fn reduction_safe(&self) -> bool {
        self.model.reduction_safe()
    }

    fn state_visible(&self) -> bool {
        self.model.state_visible()
    }

    fn stackful_tasks(&self) -> bool {
        self.model.stackful_tasks()
    }

    fn crashes(&self) -> usize {
        self.model.crashes()
    }

    fn clock_jumps(&self) -> usize {
        self.model.clock_jumps()
    }

    fn network_faults(&self) -> usize {
        self.model.network_faults()
    }

    fn one_point_per_poll(&self) -> bool {
        self.model.one_point_per_poll()
    }

    fn symmetric_members(&self) -> Vec<usize> {
        self.model.symmetric_members()
    }
}
