//! Atomics. At `access` grain every load, store and read-modify-write is a scheduling point, so
//! races between two adjacent loads can be found; at `await` grain they are plain accesses.

use std::cell::Cell;
use std::fmt::Debug;
use std::hash::Hash;

use crate::model::Grain;
use crate::rt::op::{AtomicOp, ObjState, Op};
use crate::rt::point::point;
use crate::rt::{report_observed, report_value, with_exec};
use crate::vocab::AccessKind;
use crate::vocab::ObjId;

/// An atomic value (see the module docs): each operation a scheduling point at access grain.
pub struct Atomic<T> {
    id: ObjId,
    value: Cell<T>,
}

impl<T: Copy + PartialEq + Hash + Debug + 'static> Atomic<T> {
    /// An atomic named `name` (in traces) holding `value`.
    pub fn new(name: impl Into<crate::Name>, value: T) -> Self {
        let id = with_exec(|ex| ex.add_object(name.into(), ObjState::Atomic));
        report_value(id, &value);
        Atomic {
            id,
            value: Cell::new(value),
        }
    }

    /// Returns whether the access is a traced step (its effect is then noted on it).
    async fn access(&self, op: AtomicOp) -> bool {
        let point_here = with_exec(|ex| ex.grain() == Grain::Access);
        if point_here {
            point(Op::Atomic(self.id, op)).await;
        }
        let kind = if op == AtomicOp::Load {
            AccessKind::Read
        } else {
            AccessKind::Write
        };
        with_exec(|ex| {
            ex.access(self.id, kind);
            point_here && ex.keeps_trace()
        })
    }

    fn note(&self, traced: bool, effect: impl FnOnce() -> String) {
        if traced {
            with_exec(|ex| ex.note_effect(effect));
        }
    }

    /// Reads the value.
    pub async fn load(&self) -> T {
        let traced = self.access(AtomicOp::Load).await;
        let v = self.value.get();
        report_observed(&v);
        self.note(traced, || format!("{v:?}"));
        v
    }

    /// Writes `value`.
    pub async fn store(&self, value: T) {
        let traced = self.access(AtomicOp::Store).await;
        self.set(value);
        self.note(traced, || format!("{value:?}"));
    }

    /// Sets `new` if the value is `current`; returns the previous value either way.
    pub async fn compare_exchange(&self, current: T, new: T) -> Result<T, T> {
        let traced = self.access(AtomicOp::CompareExchange).await;
        let prev = self.value.get();
        let result = if prev == current {
            self.set(new);
            Ok(prev)
        } else {
            Err(prev)
        };
        report_observed(&result);
        self.note(traced, || format!("{result:?}"));
        result
    }

    fn set(&self, value: T) {
        self.value.set(value);
        report_value(self.id, &value);
    }

    /// Reads the value without scheduling: for ghost state and invariants only.
    pub fn peek(&self) -> T {
        self.value.get()
    }
}

impl Atomic<usize> {
    /// Adds `n`; returns the previous value.
    pub async fn fetch_add(&self, n: usize) -> usize {
        let traced = self.access(AtomicOp::FetchAdd).await;
        let prev = self.value.get();
        report_observed(&prev);
        self.set(prev + n);
        self.note(traced, || format!("{prev} -> {}", prev + n));
        prev
    }

    /// Subtracts `n`; returns the previous value.
    pub async fn fetch_sub(&self, n: usize) -> usize {
        let traced = self.access(AtomicOp::FetchSub).await;
        let prev = self.value.get();
        report_observed(&prev);
        self.set(prev - n);
        self.note(traced, || format!("{prev} -> {}", prev - n));
        prev
    }
}
