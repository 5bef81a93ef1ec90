//! Plain state shared between tasks outside any lock (a map read by one task and written by
//! another between awaits). Accessing it is not a scheduling point, but it is recorded as a read
//! or a write, so partial-order reduction never treats two steps that touch it as independent.
//! Model state that only one task touches can stay in a `RefCell`.
//!
//! The value sits in a `RunCell` (a `RefCell` only its own run may touch), so a `Shared<T>` is
//! `Send + Sync` when `T: Send`, and the primitives built on it can be as well. It is borrowed
//! only for the closure given to `with`/`with_mut`, never across a scheduling point.

use std::hash::Hash;

use std::panic::Location;
use std::task::Poll;

use crate::rt::op::ObjState;
use crate::rt::run_cell::RunCell;
use crate::rt::task::Label;
use crate::rt::{report_value, with_exec};
use crate::vocab::AccessKind;
use crate::vocab::ObjId;

/// Plain state shared between tasks (see the module docs).
pub struct Shared<T> {
    id: ObjId,
    value: RunCell<T>,
}

impl<T: Hash> Shared<T> {
    /// Shared state named `name` (in traces) holding `value`.
    pub fn new(name: impl Into<crate::Name>, value: T) -> Self {
        let id = with_exec(|ex| ex.add_object(name.into(), ObjState::Atomic));
        report_value(id, &value);
        Shared {
            id,
            value: RunCell::new(value),
        }
    }

    /// A scheduling point right before the running task reads the value: at access grain
    /// another task may run first. It is synchronous (no `.await`), so the task must be able to
    /// park in the middle of a poll: tasks spawned through braid's front door are (stackful
    /// tasks); at await grain it returns at once.
    pub fn read_point(&self) {
        crate::rt::sync_point::before(self.id, AccessKind::Read);
    }

    /// A scheduling point right before the running task changes the value (see `read_point`).
    pub fn write_point(&self) {
        crate::rt::sync_point::before(self.id, AccessKind::Write);
    }

    /// `read_point`, the step named `op` in traces ("recv channel#1" rather than "read
    /// channel#1"): a primitive built on `Shared` says what its user called.
    pub fn read_point_as(&self, op: &'static str) {
        self.read_point_at(op, None);
    }

    /// `write_point`, the step named `op` in traces ("lock mutex#1").
    pub fn write_point_as(&self, op: &'static str) {
        self.write_point_at(op, None);
    }

    /// `read_point_as`, with the user's call site (see `write_point_at`).
    pub fn read_point_at(&self, op: &'static str, at: Option<&'static Location<'static>>) {
        crate::rt::sync_point::before_as(self.id, AccessKind::Read, Label { op, at });
    }

    /// `write_point_as`, with the user's call site (a `#[track_caller]` operation's caller):
    /// "lock mutex#1 at src/pool.rs:26".
    pub fn write_point_at(&self, op: &'static str, at: Option<&'static Location<'static>>) {
        crate::rt::sync_point::before_as(self.id, AccessKind::Write, Label { op, at });
    }

    /// `read_point_at` in a future's own poll: `Pending` when the run is over and the task is
    /// being finished, and then the poll must return `Pending` at once, having done nothing
    /// (`std::task::ready!` does). A task left waiting when its run ends is then dropped
    /// between polls, as tokio drops it, instead of being unwound from the point (see
    /// `rt::coroutine`).
    pub fn poll_read_point_at(
        &self,
        op: &'static str,
        at: Option<&'static Location<'static>>,
    ) -> Poll<()> {
        crate::rt::sync_point::poll_before_as(self.id, AccessKind::Read, Label { op, at })
    }

    /// `write_point_at` in a future's own poll (see `poll_read_point_at`).
    pub fn poll_write_point_at(
        &self,
        op: &'static str,
        at: Option<&'static Location<'static>>,
    ) -> Poll<()> {
        crate::rt::sync_point::poll_before_as(self.id, AccessKind::Write, Label { op, at })
    }

    /// The running task's future is about to return `Pending` waiting on this object: `op`
    /// ("lock") and what keeps it waiting ("empty"), for a deadlock's message and picture.
    /// Its holders, once `held`, are named: "held by task#2", or where `state` says
    /// ("{holders} has not finished"). Not an access; until the task's next step.
    pub fn waiting(&self, op: &'static str, state: &'static str) {
        self.waiting_at(op, state, None);
    }

    /// `waiting`, with the user's call site (see `write_point_at`).
    pub fn waiting_at(
        &self,
        op: &'static str,
        state: &'static str,
        at: Option<&'static Location<'static>>,
    ) {
        crate::rt::try_with_exec(|ex| {
            ex.waits_on(crate::rt::task::WaitsOn {
                op: Label { op, at },
                object: self.id,
                state,
            })
        });
    }

    /// The running task now holds this object (a lock, a permit): a deadlock names it.
    pub fn held(&self) {
        crate::rt::try_with_exec(|ex| {
            if let Some(me) = ex.current() {
                ex.hold(self.id, me.0);
            }
        });
    }

    /// `task` holds this object (a task's end, which only it can bring about).
    pub fn held_by(&self, task: crate::TaskId) {
        crate::rt::try_with_exec(|ex| ex.hold(self.id, task.0));
    }

    /// The running task gives this object back (see `held`).
    pub fn released(&self) {
        crate::rt::try_with_exec(|ex| {
            if let Some(me) = ex.current() {
                ex.unhold(self.id, me.0);
            }
        });
    }

    /// Reads the value.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        with_exec(|ex| {
            ex.access(self.id, AccessKind::Read);
            ex.observe_value(self.id);
        });
        // A closure that reaches the same `Shared` again panics, as a `RefCell` does.
        f(&self.value.borrow())
    }

    /// Changes the value.
    pub fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        with_exec(|ex| {
            ex.access(self.id, AccessKind::Write);
            ex.observe_value(self.id);
        });
        let mut value = self.value.borrow_mut();
        let result = f(&mut value);
        report_value(self.id, &*value);
        result
    }
}
