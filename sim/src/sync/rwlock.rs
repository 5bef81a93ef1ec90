//! A readers-writer lock: `read` and `write` are scheduling points; a writer waits for readers
//! to leave, readers wait for a writer. Guards release without a scheduling point (see Mutex).

use std::hash::Hash;
use std::ops::{Deref, DerefMut};
use std::sync::{PoisonError, TryLockError};

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::{report_value, try_with_exec, with_exec};
use crate::vocab::ObjId;

/// The data sits in a `std::sync::RwLock`, never contended (the engine lets a task in only
/// when the lock is free for it), so an `RwLock<T>` is `Send + Sync` like tokio's. A conflict
/// there would be an engine bug: it panics rather than blocks.
pub struct RwLock<T> {
    id: ObjId,
    data: std::sync::RwLock<T>,
}

fn granted<G>(taken: Result<G, TryLockError<G>>) -> G {
    match taken {
        Ok(guard) => guard,
        Err(TryLockError::Poisoned(poisoned)) => PoisonError::into_inner(poisoned),
        Err(TryLockError::WouldBlock) => panic!("an rwlock the engine granted is held"),
    }
}

impl<T: Hash> RwLock<T> {
    /// A reader-writer lock named `name` (in traces) holding `value`.
    pub fn new(name: impl Into<crate::Name>, value: T) -> Self {
        let state = ObjState::RwLock {
            readers: 0,
            writer: None,
        };
        let id = with_exec(|ex| ex.add_object(name.into(), state));
        report_value(id, &value);
        RwLock {
            id,
            data: std::sync::RwLock::new(value),
        }
    }

    /// Takes a shared read lock, waiting while it cannot be had.
    pub async fn read(&self) -> RwLockReadGuard<'_, T> {
        point(Op::ReadLock(self.id)).await;
        with_exec(|ex| {
            // Readers entering and leaving commute with each other; a writer conflicts with both.
            if let ObjState::RwLock { readers, .. } = ex.state_commuting(self.id) {
                *readers += 1;
            }
            ex.observe_value(self.id);
        });
        RwLockReadGuard {
            id: self.id,
            data: granted(self.data.try_read()),
        }
    }

    /// Takes the exclusive write lock, waiting while it cannot be had.
    pub async fn write(&self) -> RwLockWriteGuard<'_, T> {
        point(Op::WriteLock(self.id)).await;
        with_exec(|ex| {
            let me = ex.current().map(|t| t.0);
            if let ObjState::RwLock { writer, .. } = ex.state_mut(self.id) {
                *writer = me;
            }
            ex.observe_value(self.id);
        });
        RwLockWriteGuard {
            id: self.id,
            data: granted(self.data.try_write()),
            report: report_value::<T>,
        }
    }
}

/// A held read lock: released when dropped.
pub struct RwLockReadGuard<'a, T> {
    id: ObjId,
    data: std::sync::RwLockReadGuard<'a, T>,
}

impl<T> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        let id = self.id;
        try_with_exec(|ex| {
            if let ObjState::RwLock { readers, .. } = ex.state_commuting(id) {
                *readers -= 1;
            }
        });
    }
}

/// A held write lock: released when dropped.
pub struct RwLockWriteGuard<'a, T> {
    id: ObjId,
    data: std::sync::RwLockWriteGuard<'a, T>,
    /// Reports the contents as the guard leaves them (value-state search).
    report: fn(ObjId, &T),
}

impl<T> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        let id = self.id;
        (self.report)(id, &self.data);
        try_with_exec(|ex| {
            if let ObjState::RwLock { writer, .. } = ex.state_mut(id) {
                *writer = None;
            }
        });
    }
}
