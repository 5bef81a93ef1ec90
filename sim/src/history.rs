//! A model's history: typed events, judged by the model's invariants the moment they happen.

use std::cell::RefCell;
use std::fmt::Display;
use std::hash::Hash;
use std::rc::Rc;

use crate::digest;
use crate::invariant::Invariant;
use crate::model::Monitor;
use crate::rt::op::ObjState;
use crate::rt::{in_run, with_exec};
use crate::vocab::AccessKind;
use crate::vocab::ObjId;
use crate::Violation;

/// The event log of one run. Cheap to clone: all clones share one log.
pub struct History<E> {
    invariants: Rc<RefCell<Vec<Box<dyn Invariant<E>>>>>,
    /// Emitting is a write to this object: invariants may depend on the order of events, so
    /// two steps that emit are never reordered by partial-order reduction...
    id: ObjId,
    /// ...unless the model declares that its invariants only compare events of one task, or
    /// events whose order other dependencies (a channel, a lock) already fix.
    cross_task_order: bool,
}

impl<E> Clone for History<E> {
    fn clone(&self) -> Self {
        History {
            invariants: self.invariants.clone(),
            id: self.id,
            cross_task_order: self.cross_task_order,
        }
    }
}

impl<E: Hash + Display + 'static> History<E> {
    /// An empty history judged by `invariants`, with an engine object of its own: emitting is a
    /// write to it, so the reductions keep the order of events (see `order_per_task`).
    pub fn new(invariants: Vec<Box<dyn Invariant<E>>>) -> Self {
        let id = with_exec(|ex| ex.add_object("history".into(), ObjState::Atomic));
        History {
            invariants: Rc::new(RefCell::new(invariants)),
            id,
            cross_task_order: true,
        }
    }

    /// Declares that no invariant's verdict depends on the order in which *different* tasks
    /// emit events, beyond what the engine already orders (each task's own events; steps that
    /// conflict on a lock, channel or other object). Emitting then adds no dependency, so
    /// partial-order reduction can reorder independent steps that emit.
    pub fn order_per_task(mut self) -> Self {
        self.cross_task_order = false;
        self
    }

    /// Records `event`; the first invariant it breaks ends the run with a violation.
    pub fn emit(&self, event: E) {
        if !in_run() {
            return;
        }
        let hash = || digest::of(&event);
        let over = with_exec(|ex| {
            if ex.is_over() {
                return true;
            }
            if self.cross_task_order {
                ex.access(self.id, AccessKind::Write);
                ex.append_value(self.id, hash);
            }
            ex.digest_event(hash);
            ex.trace_event(|| event.to_string());
            false
        });
        if over {
            return;
        }
        let mut invariants = self.invariants.borrow_mut();
        let broken = invariants
            .iter_mut()
            .find_map(|inv| inv.observe(&event).err().map(|m| (inv, m)));
        if let Some((inv, message)) = broken {
            with_exec(|ex| {
                ex.trace_about(|| inv.about());
                ex.violate(inv.name(), message);
            });
        }
    }

    /// The monitor the engine consults at quiescence.
    pub fn monitor(&self) -> Rc<dyn Monitor> {
        Rc::new(self.clone())
    }
}

impl<E> Monitor for History<E> {
    fn at_quiescence(&self) -> Option<Violation> {
        let step = with_exec(|ex| ex.steps());
        self.invariants.borrow_mut().iter_mut().find_map(|inv| {
            inv.at_quiescence().err().map(|message| {
                with_exec(|ex| ex.trace_about(|| inv.about()));
                Violation {
                    invariant: inv.name().to_string(),
                    message,
                    step,
                }
            })
        })
    }
}
