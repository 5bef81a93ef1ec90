//! A std-shaped mutex for synchronous critical sections (`braid::std::sync::Mutex`).

use std::fmt;

pub use sim::sync::MutexGuard;

/// `std::sync::Mutex`: `lock()` is synchronous and waits while another task holds it (the task
/// parks on its own stack). A panic ends the run as a failure, so a lock is never poisoned:
/// `lock()` always returns `Ok`.
pub struct Mutex<T> {
    inner: sim::sync::Mutex<T>,
}

impl<T> Mutex<T> {
    /// A mutex named `std_mutex#1`, ... in traces.
    pub fn new(value: T) -> Self {
        Self::named(sim::sync::auto_name("std_mutex"), value)
    }

    /// A mutex with a name of its own for traces.
    pub fn named(name: impl Into<sim::Name>, value: T) -> Self {
        Mutex {
            inner: sim::sync::Mutex::opaque(name, value),
        }
    }

    /// Waits for the lock (a scheduling point) and returns its guard.
    pub fn lock(&self) -> Result<MutexGuard<'_, T>, std::convert::Infallible> {
        Ok(self.inner.lock_sync())
    }

    /// The lock if it is free now (a scheduling point at access grain).
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        self.inner.try_lock_sync().ok_or(TryLockError::WouldBlock)
    }
}

impl<T: Default> Default for Mutex<T> {
    /// A mutex holding `T::default()`, as std's.
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

/// Why `try_lock` did not take the lock.
#[derive(Debug, PartialEq, Eq)]
pub enum TryLockError {
    /// Another task holds it.
    WouldBlock,
}

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("try_lock failed because the operation would block")
    }
}

impl std::error::Error for TryLockError {}
