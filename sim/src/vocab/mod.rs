//! The words the engine's layers share: which task (`TaskId`), which object (`ObjId`), what a
//! step touched (`Access`), and what a run came to (`RunResult`). At the bottom of the module
//! graph (`tools/modgraph.py`): the runtime (`rt`), the strategies, the runner and the explorer
//! all speak them, and they name none of those.

pub(crate) mod access;
mod name;
pub(crate) mod result;

pub use access::{Access, AccessKind, StepAccesses};
pub use name::Name;
pub use result::{describe_size, RunOutcome, RunResult};

/// A task within one run, numbered in spawn order (deterministic: spawns happen under the baton).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub usize);

/// An engine object (lock, channel, notify, atomic) within one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjId(pub(crate) usize);

impl ObjId {
    /// Not an object: what a step that depends on every other step accesses (a clock jump,
    /// whose enabling depends on whether any other task can run). It conflicts with every
    /// access; the state by trace leaves it out (the step's real accesses are recorded beside).
    pub const EVERYTHING: ObjId = ObjId(usize::MAX);
}
