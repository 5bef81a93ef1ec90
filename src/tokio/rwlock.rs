//! `tokio::sync::RwLock`: a semaphore of `max_readers` permits; a reader takes one, a writer
//! takes them all. Since the semaphore is FIFO, the lock is fair as tokio's is: a writer that
//! waits holds back the readers who come after it, so writers are never starved.

use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use super::mutex::TryLockError;
use super::semaphore::Semaphore;

/// tokio's limit on concurrent readers.
const MAX_READS: u32 = u32::MAX >> 3;

/// An async reader-writer lock, as `tokio::sync::RwLock`: many readers or one writer, served
/// first come, first served.
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::RwLock};
///
/// braid::check(|| async {
///     let config = Arc::new(RwLock::new(1));
///     let c = config.clone();
///     let writer = tokio::spawn(async move { *c.write().await = 2 });
///     let seen = *config.read().await;
///     assert!(seen == 1 || seen == 2);
///     writer.await.unwrap();
///     assert_eq!(*config.read().await, 2);
/// })
/// .assert_holds();
/// ```
pub struct RwLock<T: ?Sized> {
    max_readers: u32,
    sem: Semaphore,
    value: UnsafeCell<T>,
}

// SAFETY: as tokio's. The value is reached only through a guard: a read guard holds one of
// the semaphore's permits, a write guard all of them. The permits are counted in a
// `std::sync::Mutex` (`Shared`), so this holds whichever thread takes or gives them (on a
// thread with no run in progress, taking them panics and giving them back does nothing: a hang
// at worst, never a writer beside a reader). Readers on several threads share `&T` (`T: Sync`),
// and a writer may move a `T` from one thread to another (`T: Send`).
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}
// SAFETY: a read guard only hands out `&T`, and gives a permit back when dropped (which any
// thread may do, see above): sending it needs `T: Sync` only, as tokio's. (The write guard's
// auto impls, through `&RwLock<T>`, already need `T: Send + Sync`, as tokio's do.)
unsafe impl<T: ?Sized + Sync> Send for RwLockReadGuard<'_, T> {}

impl<T> RwLock<T> {
    /// A lock named `rwlock#1`, ... in traces.
    pub fn new(value: T) -> Self {
        RwLock::with_max_readers(value, MAX_READS)
    }

    /// A lock that lets at most `max_readers` read at once.
    pub fn with_max_readers(value: T, max_readers: u32) -> Self {
        // tokio's messages.
        assert!(
            max_readers != 0,
            "a RwLock may not be created with 0 readers"
        );
        assert!(
            max_readers <= MAX_READS,
            "a read-write lock allows 1 to {MAX_READS} readers"
        );
        RwLock {
            max_readers,
            sem: Semaphore::of_kind("rwlock", max_readers as usize),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, the lock consumed.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Waits for shared access: queued behind earlier lockers, a waiting writer included.
    #[track_caller]
    pub fn read(&self) -> impl Future<Output = RwLockReadGuard<'_, T>> + '_ {
        let acquire = self.sem.acquire_at(1, "read", Some(Location::caller()));
        async move {
            acquire.await.expect("a lock's semaphore is never closed");
            RwLockReadGuard { lock: self }
        }
    }

    /// Waits for exclusive access: queued behind earlier lockers.
    #[track_caller]
    pub fn write(&self) -> impl Future<Output = RwLockWriteGuard<'_, T>> + '_ {
        let acquire =
            self.sem
                .acquire_at(self.max_readers as usize, "write", Some(Location::caller()));
        async move {
            acquire.await.expect("a lock's semaphore is never closed");
            RwLockWriteGuard { lock: self }
        }
    }

    /// Shared access if no writer holds the lock or waits for it, without waiting.
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        self.sem.state_write_point();
        match self.sem.try_take(1) {
            Ok(()) => Ok(RwLockReadGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Exclusive access if nobody holds the lock or waits for it, without waiting.
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        self.sem.state_write_point();
        match self.sem.try_take(self.max_readers as usize) {
            Ok(()) => Ok(RwLockWriteGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// The value, through the only reference to the lock.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: ?Sized> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RwLock").finish_non_exhaustive()
    }
}

/// Shared access: derefs to the value; dropping it gives the read back.
#[must_use = "dropping the guard releases the lock at once"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: a read permit is held, so no writer holds all of them: only shared
        // references to the value exist.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

/// Exclusive access: derefs to the value; dropping it releases the lock.
#[must_use = "dropping the guard releases the lock at once"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard holds every permit: no other reference to the value.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.sem.release(self.lock.max_readers as usize);
    }
}
