//! `tokio::sync::Mutex`: a semaphore of one permit around the value, so it is fair (FIFO) as
//! tokio's is, and a `lock()` dropped while it waits (a `select!` loser, a `timeout`) leaves the
//! queue cleanly.

use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::Arc;

use super::semaphore::{Semaphore, TryAcquireError};

/// An async mutex, as `tokio::sync::Mutex`: `lock().await` waits (first come, first served)
/// while another task holds it; dropping the guard releases it.
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::Mutex};
///
/// braid::check(|| async {
///     let counter = Arc::new(Mutex::new(0));
///     let c = counter.clone();
///     let task = tokio::spawn(async move { *c.lock().await += 1 });
///     *counter.lock().await += 1;
///     task.await.unwrap();
///     assert_eq!(*counter.lock().await, 2);
/// })
/// .assert_holds();
/// ```
pub struct Mutex<T: ?Sized> {
    sem: Semaphore,
    value: UnsafeCell<T>,
}

// SAFETY: as tokio's. The value is reached only through a guard, and a guard exists only
// while its holder has the semaphore's one permit. The semaphore's permits are counted in a
// `std::sync::Mutex` (`Shared`), so they stay exclusive whichever thread takes or gives one: on
// a thread with no run in progress, taking one panics (the engine is not there) and giving one
// back does nothing (the lock stays held: a hang, never two guards). So at most one `&mut T`
// (or `&T` through a guard) exists at a time, and sharing a `Mutex<T>` between threads only
// ever moves a `T` between them: `T: Send` is what it needs, as for `std::sync::Mutex`.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
// SAFETY: a guard shared between threads hands out `&T` on each: `T: Sync` (and `T: Send`, for
// the mutex it borrows to be shared), as tokio's. (Sending a guard needs `Mutex<T>: Sync`, the
// auto impl.)
unsafe impl<T: ?Sized + Send + Sync> Sync for MutexGuard<'_, T> {}
// SAFETY: as for `MutexGuard`.
unsafe impl<T: ?Sized + Send + Sync> Sync for OwnedMutexGuard<T> {}

impl<T> Mutex<T> {
    /// A mutex named `mutex#1`, `mutex#2`, ... in traces.
    pub fn new(value: T) -> Self {
        Mutex {
            sem: Semaphore::of_kind("mutex", 1),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, the mutex consumed.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits for the lock (queued behind earlier lockers) and returns its guard. Traces and
    /// deadlocks name the caller's line ("lock mutex#1 at src/pool.rs:26").
    #[track_caller]
    pub fn lock(&self) -> impl Future<Output = MutexGuard<'_, T>> + '_ {
        let acquire = self.sem.acquire_at(1, "lock", Some(Location::caller()));
        async move {
            acquire.await.expect("a mutex's semaphore is never closed");
            MutexGuard { lock: self }
        }
    }

    /// [`lock`](Self::lock) on an `Arc`, for a guard that outlives the borrow.
    #[track_caller]
    pub fn lock_owned(self: Arc<Self>) -> impl Future<Output = OwnedMutexGuard<T>> {
        let at = Location::caller();
        async move {
            self.sem
                .acquire_at(1, "lock", Some(at))
                .await
                .expect("a mutex's semaphore is never closed");
            OwnedMutexGuard { lock: self }
        }
    }

    /// The guard if the mutex is free now (and nobody waits for it), without waiting.
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        self.sem.state_write_point();
        match self.sem.try_take(1) {
            Ok(()) => Ok(MutexGuard { lock: self }),
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => Err(TryLockError(())),
        }
    }

    /// [`try_lock`](Self::try_lock) on an `Arc`.
    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        self.sem.state_write_point();
        match self.sem.try_take(1) {
            Ok(()) => Ok(OwnedMutexGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// The value, through the only reference to the mutex (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

/// As tokio's: the value when the mutex is free (a `try_lock`, so an operation), else
/// `<locked>`.
impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Ok(inner) => d.field("data", &&*inner),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// The lock held: derefs to the value; dropping it unlocks.
#[must_use = "dropping the guard unlocks the mutex at once"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex's only permit: no other reference to the value.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only one through the guard.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The lock held through an `Arc<Mutex>`: derefs to the value; dropping it unlocks.
#[must_use = "dropping the guard unlocks the mutex at once"]
pub struct OwnedMutexGuard<T: ?Sized> {
    lock: Arc<Mutex<T>>,
}

impl<T: ?Sized> Deref for OwnedMutexGuard<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex's only permit.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for OwnedMutexGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for OwnedMutexGuard<T> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// `try_lock` found the mutex held (or others waiting for it first).
#[derive(Debug, PartialEq, Eq)]
pub struct TryLockError(pub(super) ());

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operation would block")
    }
}

impl std::error::Error for TryLockError {}
