//! A mutex. `lock` is a scheduling point; a task waiting for a held mutex is blocked. Dropping
//! the guard releases it without a scheduling point: the holder's next operation is one, and
//! nothing the holder does in between is visible to other tasks.

use std::hash::Hash;
use std::ops::{Deref, DerefMut};
use std::sync::PoisonError;

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::{report_opaque, report_value, try_with_exec, with_exec};
use crate::vocab::ObjId;

/// The data sits in a `std::sync::Mutex`, never contended (one task runs at a time), so that a
/// `Mutex<T>` is `Send + Sync` like the tokio mutex it stands for and can be shared in an `Arc`.
pub struct Mutex<T> {
    id: ObjId,
    data: std::sync::Mutex<T>,
    /// Reports the contents as a guard leaves them (value-state search).
    report: fn(ObjId, &T),
}

impl<T: Hash> Mutex<T> {
    /// A mutex whose contents a search by state sees (`Model::state_visible`).
    pub fn new(name: impl Into<crate::Name>, value: T) -> Self {
        Self::with_report(name.into(), value, report_value::<T>)
    }
}

impl<T> Mutex<T> {
    /// A mutex for any `T`, whose contents a search by state cannot compare: each change makes
    /// a state never seen before, so such a search loses its cuts but stays sound.
    pub fn opaque(name: impl Into<crate::Name>, value: T) -> Self {
        Self::with_report(name.into(), value, report_opaque::<T>)
    }

    fn with_report(name: crate::Name, value: T, report: fn(ObjId, &T)) -> Self {
        let id = with_exec(|ex| ex.add_object(name, ObjState::Mutex { owner: None }));
        report(id, &value);
        Mutex {
            id,
            data: std::sync::Mutex::new(value),
            report,
        }
    }

    /// Waits for the lock and takes it: a scheduling point, at which the task blocks while another
    /// holds it.
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        point(Op::Lock(self.id)).await;
        self.acquire()
    }

    /// Takes the lock synchronously, as `std::sync::Mutex::lock` does: a scheduling point in
    /// the middle of a poll (at every grain, since it may have to wait), which parks a stackful
    /// task until the lock is free. A stackless task cannot wait there: it takes a free lock,
    /// and a held one is reported as a deadlock.
    pub fn lock_sync(&self) -> MutexGuard<'_, T> {
        if crate::rt::coroutine::in_stackful() {
            crate::rt::sync_point::sync_point(Op::Lock(self.id));
        } else {
            with_exec(|ex| {
                if ex.is_held(self.id) {
                    let name = ex.object_name(self.id);
                    let message = format!(
                        "{name} is held and a stackless task cannot wait for it synchronously"
                    );
                    ex.violate("deadlock", message);
                }
            });
        }
        self.acquire()
    }

    /// Takes the lock if it is free, as `std::sync::Mutex::try_lock`: a scheduling point at
    /// access grain, never a wait.
    pub fn try_lock_sync(&self) -> Option<MutexGuard<'_, T>> {
        crate::rt::sync_point::before(self.id, crate::vocab::AccessKind::Write);
        let held = with_exec(|ex| {
            let held = ex.is_held(self.id);
            if held {
                ex.access(self.id, crate::vocab::AccessKind::Read);
            }
            held
        });
        if held {
            return None;
        }
        Some(self.acquire())
    }

    #[inline]
    fn acquire(&self) -> MutexGuard<'_, T> {
        with_exec(|ex| {
            let owner = ex.current().map(|t| t.0);
            *ex.state_mut(self.id) = ObjState::Mutex { owner };
            ex.observe_value(self.id);
        });
        MutexGuard {
            id: self.id,
            data: self.data.lock().unwrap_or_else(PoisonError::into_inner),
            report: self.report,
        }
    }
}

/// A held lock: released (and the value's state reported) when dropped.
pub struct MutexGuard<'a, T> {
    id: ObjId,
    data: std::sync::MutexGuard<'a, T>,
    report: fn(ObjId, &T),
}

/// As std's guard: the value it guards (reading it through the guard is not a step).
impl<T: std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        let id = self.id;
        (self.report)(id, &self.data);
        try_with_exec(|ex| *ex.state_mut(id) = ObjState::Mutex { owner: None });
    }
}
