//! Marks a model leaves in the trace to explain a run in pictures: the phases of a task (a span
//! on its lane) and each message's way from the queue it entered to the wire. A mark is no
//! scheduling point and touches no digest, state, step number or decision: a run goes exactly
//! the same way with or without marks (replay files never drift on them). They are recorded
//! only when the run keeps a trace (replay, rendering); otherwise they cost one thread-local
//! read.

use std::fmt::Display;

use crate::rt::{keeps_trace, try_with_exec};
use crate::trace::Mark;

/// Enters the phase `name` of the running task, until the guard drops:
/// `let _phase = sim::mark::phase("register_session..bind");`.
#[must_use = "the phase ends when the guard drops"]
pub fn phase(name: impl Display) -> Phase {
    Phase {
        name: record(Mark::PhaseBegins, &name),
    }
}

/// A phase of the running task (see `phase`): ends where it drops.
pub struct Phase {
    /// `None` when the begin was not recorded (no trace): the end is not either.
    name: Option<String>,
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            record(Mark::PhaseEnds, &name);
        }
    }
}

/// The message `key` (a name the model chooses, such as "p1#1") entered a queue or a lane here.
pub fn enqueued(key: impl Display) {
    record(Mark::Enqueued, &key);
}

/// The message `key` went out on the wire here: the pictures link it to where it was enqueued.
pub fn on_wire(key: impl Display) {
    record(Mark::OnWire, &key);
}

/// Records `mark` in the running task's trace, returning the name as recorded; `None` when
/// nothing is traced (or the run is over, or a guard drops while the runtime tears down). The
/// name is spelled out only when it is recorded: untraced runs allocate nothing.
#[inline]
fn record(mark: Mark, name: &dyn Display) -> Option<String> {
    if !keeps_trace() {
        return None;
    }
    let mut recorded = None;
    try_with_exec(|ex| {
        ex.trace_mark(mark, || {
            let name = name.to_string();
            recorded = Some(name.clone());
            name
        });
    });
    recorded
}
