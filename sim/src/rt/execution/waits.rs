//! What a task blocked on its waker waits for, as the primitive that blocked it says, and who
//! holds what: so a deadlock in code on the tokio facade names the channel, lock or task each
//! task waits on and who holds it ("main waits on lock mutex#1: held by task#2"), as a model's
//! deadlock does with the engine's own primitives.
//!
//! A primitive says it (through `sync::Shared`) just before its future returns `Pending`;
//! the record lasts until the task is next granted a step. Holders are kept per object: a
//! task that takes a lock or permit holds it until it, or whoever its guard went to, gives it
//! back. None of this is in a digest or decides anything: it is for messages and pictures.

use super::Execution;
use crate::rt::task::{Label, Task, WaitsOn};
use crate::trace::Wait;
use crate::vocab::ObjId;

impl Execution {
    /// The running task is about to return `Pending` on `wait` (one of several, in a
    /// `select!`).
    pub(crate) fn waits_on(&mut self, wait: WaitsOn) {
        if let Some(me) = self.current {
            let waits = &mut self.tasks[me.0].waits_on;
            if !waits
                .iter()
                .any(|w| w.object == wait.object && w.op.op == wait.op.op)
            {
                waits.push(wait);
            }
        }
    }

    /// The running task now holds `obj` (a lock, a permit).
    pub(crate) fn hold(&mut self, obj: ObjId, task: usize) {
        self.holders.push((obj.0, task));
    }

    /// `task` gave `obj` back; if it is not among the holders (its guard was moved to it), the
    /// longest holder is taken to have given it.
    pub(crate) fn unhold(&mut self, obj: ObjId, task: usize) {
        let of_obj = |&(o, _): &(usize, usize)| o == obj.0;
        let at = self.holders.iter().position(|&h| h == (obj.0, task));
        if let Some(at) = at.or_else(|| self.holders.iter().position(of_obj)) {
            self.holders.remove(at);
        }
    }

    /// What `task`, blocked on its waker, waits on, if the primitive said: a `Wait` whose
    /// `op` joins a `select!`'s several waits with "or". `with_lines`: each wait's call site
    /// too (for the trace and pictures; a violation's message leaves them out, so a replay
    /// file does not drift when a line above the call moves).
    pub(crate) fn said_wait(&self, task: &Task, with_lines: bool) -> Option<Wait> {
        let first = task.waits_on.first()?;
        let mut ops = Vec::with_capacity(task.waits_on.len());
        let mut holders = Vec::new();
        let mut states = Vec::new();
        for w in &task.waits_on {
            let op = match with_lines {
                true => w.op,
                false => Label { at: None, ..w.op },
            };
            ops.push(op.describe(&self.objects[w.object.0].name));
            let held: Vec<String> = self
                .holders
                .iter()
                .filter(|&&(o, _)| o == w.object.0)
                .map(|&(_, t)| self.tasks[t].name.to_string())
                .collect();
            // A state may name its holders itself ("{holders} has not finished").
            states.push(match (held.is_empty(), w.state.contains("{holders}")) {
                (true, _) => w.state.replace("{holders} ", ""),
                (false, true) => w.state.replace("{holders}", &held.join(", ")),
                (false, false) => format!("held by {}", held.join(", ")),
            });
            holders.extend(held);
        }
        holders.dedup();
        let (op, state) = match ops.len() {
            1 => (ops.remove(0), states.remove(0)),
            _ => (ops.join(" or "), states.join(" / ")),
        };
        Some(Wait {
            task: task.name.to_string(),
            op,
            object: Some(self.objects[first.object.0].name.to_string()),
            state,
            holders,
            idle: false,
        })
    }
}
