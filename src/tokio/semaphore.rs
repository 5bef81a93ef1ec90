//! `tokio::sync::Semaphore`: a fair (FIFO) counting semaphore, and the base of the facade's
//! `Mutex`, `RwLock` and bounded `mpsc` (as tokio's batch semaphore is theirs).
//!
//! Fairness as tokio specifies it: waiters are served in the order they asked, and the waiter
//! at the head of the queue takes released permits as they come, even when it needs more than
//! are free yet, so a large request is never starved by small ones behind it (they wait too).
//! Hence the invariant kept below: while anyone waits, no permit is free.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use sim::sync::Shared;

/// One task waiting for permits: what it still needs, what it has been given so far (given
/// back if it stops waiting), and its waker. Atomics and a `std::sync::Mutex` rather than
/// cells, so the semaphore and its futures are `Send + Sync`; every access is made under the
/// semaphore's own state lock (`Shared::with_mut`), so `Relaxed` is enough.
struct Waiter {
    needed: AtomicUsize,
    acquired: AtomicUsize,
    queued: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Waiter {
    fn take_waker(&self) -> Option<Waker> {
        self.waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Stores `waker`, returning the one it replaces (to drop outside any borrow: a waker's
    /// drop may reach the semaphore again).
    fn swap_waker(&self, waker: &Waker) -> Option<Waker> {
        self.waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(waker.clone())
    }
}

/// The semaphore's state. The engine sees every change as a write (and hashes only a summary:
/// the free permits, whether it is closed, and what each waiter still needs).
struct Core {
    permits: usize,
    closed: bool,
    waiters: VecDeque<Arc<Waiter>>,
}

impl Hash for Core {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.permits.hash(state);
        self.closed.hash(state);
        for w in &self.waiters {
            w.needed.load(Relaxed).hash(state);
        }
    }
}

impl Core {
    /// Adds `n` permits, handing them to the waiters in order; returns the wakers of those now
    /// served, to be woken once the state is no longer borrowed.
    fn release(&mut self, n: usize) -> Vec<Waker> {
        self.permits += n;
        let mut woken = Vec::new();
        while let Some(head) = self.waiters.front() {
            let take = self.permits.min(head.needed.load(Relaxed));
            let needed = head.needed.fetch_sub(take, Relaxed) - take;
            head.acquired.fetch_add(take, Relaxed);
            self.permits -= take;
            if needed > 0 {
                break;
            }
            head.queued.store(false, Relaxed);
            woken.extend(head.take_waker());
            self.waiters.pop_front();
        }
        woken
    }
}

fn wake_all(wakers: Vec<Waker>) {
    for w in wakers {
        w.wake();
    }
}

/// A counting semaphore, as `tokio::sync::Semaphore`: `acquire().await` waits for a permit,
/// the permit gives it back when dropped. Fair: waiters are served first come, first served,
/// and one at the head that asks for more permits than are free holds back those behind it.
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::Semaphore};
///
/// braid::check(|| async {
///     let sem = Arc::new(Semaphore::new(1));
///     let s = sem.clone();
///     let task = tokio::spawn(async move { drop(s.acquire().await.unwrap()) });
///     let permit = sem.acquire().await.unwrap();
///     assert_eq!(sem.available_permits(), 0);
///     drop(permit);
///     task.await.unwrap();
///     assert_eq!(sem.available_permits(), 1);
/// })
/// .assert_holds();
/// ```
pub struct Semaphore {
    state: Shared<Core>,
    /// What its operations are called in traces and deadlocks (by what it serves).
    verbs: Verbs,
    /// Woken once permits come back and that many are free (a bounded channel's closed
    /// receiver, waiting for all its slots to be free).
    on_release: Mutex<Option<(Waker, usize)>>,
}

/// A semaphore's operations in its user's words: a mutex's acquire is a "lock", a bounded
/// channel's a "send" (waiting for a slot, held by no task but by the messages queued).
#[derive(Clone, Copy)]
struct Verbs {
    acquire: &'static str,
    release: &'static str,
    /// Why an acquirer waits, when no task is named as holding it.
    waiting: &'static str,
    /// Tasks hold its permits (a lock's guard, a permit), so a deadlock names them.
    held_by_tasks: bool,
}

impl Verbs {
    fn of(kind: &str) -> Verbs {
        let (acquire, release, waiting, held_by_tasks) = match kind {
            "mutex" | "rwlock" => ("lock", "unlock", "locked", true),
            "channel" => ("send", "free slot", "full", false),
            _ => ("acquire", "release", "no permits", true),
        };
        Verbs {
            acquire,
            release,
            waiting,
            held_by_tasks,
        }
    }
}

impl Semaphore {
    /// The most permits a semaphore holds (tokio's bound).
    pub const MAX_PERMITS: usize = usize::MAX >> 3;

    /// A semaphore with `permits` permits, named `semaphore#1`, ... in traces.
    pub fn new(permits: usize) -> Self {
        Semaphore::of_kind("semaphore", permits)
    }

    /// A semaphore named after what it serves (`mutex#1`, `rwlock#1`, `channel#1`).
    pub(crate) fn of_kind(kind: &'static str, permits: usize) -> Self {
        assert!(
            permits <= Self::MAX_PERMITS,
            "a semaphore holds at most {} permits",
            Self::MAX_PERMITS
        );
        Semaphore {
            state: Shared::new(
                sim::sync::auto_name(kind),
                Core {
                    permits,
                    closed: false,
                    waiters: VecDeque::new(),
                },
            ),
            on_release: Mutex::new(None),
            verbs: Verbs::of(kind),
        }
    }

    /// The permits free now (a scheduling point: another task may take or give one first).
    pub fn available_permits(&self) -> usize {
        self.state.read_point();
        self.state.with(|c| c.permits)
    }

    /// Adds `n` permits, serving waiters first come, first served.
    ///
    /// # Panics
    /// When the semaphore would hold more than [`MAX_PERMITS`](Self::MAX_PERMITS), as tokio's.
    pub fn add_permits(&self, n: usize) {
        self.state.write_point();
        let free = self.state.with(|c| c.permits);
        if free
            .checked_add(n)
            .is_none_or(|total| total > Self::MAX_PERMITS)
        {
            panic!(
                "number of added permits ({n}) would overflow MAX_PERMITS ({})",
                Self::MAX_PERMITS
            );
        }
        self.release_now(n);
    }

    /// Takes up to `n` free permits away for good; returns how many it took.
    pub fn forget_permits(&self, n: usize) -> usize {
        self.state.write_point();
        self.state.with_mut(|c| {
            let taken = c.permits.min(n);
            c.permits -= taken;
            taken
        })
    }

    /// Closes the semaphore: waiting acquirers fail with `AcquireError`, and so does every
    /// later acquire. Permits already held stay valid.
    pub fn close(&self) {
        self.state.write_point();
        let woken = self.state.with_mut(|c| {
            c.closed = true;
            c.waiters
                .drain(..)
                .filter_map(|w| {
                    w.queued.store(false, Relaxed);
                    w.take_waker()
                })
                .collect::<Vec<_>>()
        });
        wake_all(woken);
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.state.read_point();
        self.state.with(|c| c.closed)
    }

    /// Waits for a permit (queued behind earlier waiters).
    #[track_caller]
    pub fn acquire(
        &self,
    ) -> impl Future<Output = Result<SemaphorePermit<'_>, AcquireError>> + Send + '_ {
        self.acquire_many(1)
    }

    /// Waits for `n` permits at once (queued behind earlier waiters, and holding back later
    /// ones while it waits).
    #[track_caller]
    pub fn acquire_many(
        &self,
        n: u32,
    ) -> impl Future<Output = Result<SemaphorePermit<'_>, AcquireError>> + Send + '_ {
        let acquire = self.acquire_at(n as usize, self.verbs.acquire, Some(Location::caller()));
        async move {
            acquire.await?;
            Ok(SemaphorePermit {
                sem: self,
                permits: n as usize,
            })
        }
    }

    /// A permit if one is free now, without waiting.
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// `n` permits if they are free now, without waiting.
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.state.write_point();
        self.try_take(n as usize)?;
        Ok(SemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// [`acquire`](Self::acquire) on an `Arc`, for a permit that outlives the borrow.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_many_owned(1).await
    }

    /// [`acquire_many`](Self::acquire_many) on an `Arc`.
    pub async fn acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_n(n as usize).await?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// [`try_acquire`](Self::try_acquire) on an `Arc`.
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_many_owned(1)
    }

    /// [`try_acquire_many`](Self::try_acquire_many) on an `Arc`.
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.state.write_point();
        self.try_take(n as usize)?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// The scheduling point before an operation on this semaphore, for the primitives built on
    /// it (their `try_` operations).
    pub(crate) fn state_write_point(&self) {
        self.state.write_point_as(self.verbs.acquire);
    }

    /// Takes `n` permits now or fails (no scheduling point: the caller has had it).
    pub(crate) fn try_take(&self, n: usize) -> Result<(), TryAcquireError> {
        self.state
            .with_mut(|c| {
                if c.closed {
                    Err(TryAcquireError::Closed)
                } else if c.permits >= n {
                    // Enough free permits means nobody waits (see the module's invariant).
                    c.permits -= n;
                    Ok(())
                } else {
                    Err(TryAcquireError::NoPermits)
                }
            })
            .inspect(|()| self.note_held())
    }

    /// The running task holds permits now (named in a deadlock).
    fn note_held(&self) {
        if self.verbs.held_by_tasks {
            self.state.held();
        }
    }

    /// Waits for `n` permits; the caller owns them once it is ready with `Ok`.
    pub(crate) fn acquire_n(&self, n: usize) -> Acquire<'_> {
        self.acquire_as(n, self.verbs.acquire)
    }

    /// `acquire_n`, named `op` in traces (an `RwLock`'s "read" and "write").
    pub(crate) fn acquire_as(&self, n: usize, op: &'static str) -> Acquire<'_> {
        self.acquire_at(n, op, None)
    }

    /// `acquire_as`, with the user's call site (the caller of a `#[track_caller]` operation).
    pub(crate) fn acquire_at(
        &self,
        n: usize,
        op: &'static str,
        at: Option<&'static Location<'static>>,
    ) -> Acquire<'_> {
        Acquire {
            sem: self,
            op,
            at,
            n,
            waiter: None,
            done: false,
        }
    }

    /// Gives back `n` permits (a guard's or a permit's drop): a scheduling point, since
    /// another task may take them at once, or look first; nothing to do once the run is over.
    pub(crate) fn release(&self, n: usize) {
        if n == 0 || !sim::engine_running() {
            return;
        }
        self.state.write_point_as(self.verbs.release);
        if self.verbs.held_by_tasks {
            self.state.released();
        }
        self.release_now(n);
    }

    /// Gives back `n` permits, the caller having had its scheduling point.
    fn release_now(&self, n: usize) {
        let woken = self.state.with_mut(|c| c.release(n));
        wake_all(woken);
        self.wake_on_release();
    }

    /// The free permits now, with no scheduling point (for the primitives built on it, after
    /// their own).
    pub(crate) fn free_now(&self) -> usize {
        self.state.with(|c| c.permits)
    }

    /// Wakes the waker [`notify_release`](Self::notify_release) keeps, if as many permits
    /// as it waits for are free now.
    pub(crate) fn wake_on_release(&self) {
        let waker = {
            let mut slot = self
                .on_release
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            // The free count is read only when somebody waits (not on every release).
            match &*slot {
                Some((_, when_free)) if self.free_now() >= *when_free => slot.take(),
                _ => None,
            }
        };
        if let Some((w, _)) = waker {
            w.wake();
        }
    }

    /// Forgets the waker [`notify_release`](Self::notify_release) keeps (its task is gone).
    pub(crate) fn forget_release_waker(&self) {
        let stale = self
            .on_release
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(stale);
    }

    /// Has `waker` woken once permits come back and `when_free` are free (tokio wakes a
    /// closed channel's receiver only once its slots are all free).
    pub(crate) fn notify_release(&self, waker: &Waker, when_free: usize) {
        let stale = self
            .on_release
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace((waker.clone(), when_free));
        drop(stale);
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Semaphore").finish_non_exhaustive()
    }
}

/// Waiting for permits: queued at the first poll unless they are free; dropped while queued,
/// it leaves the queue and gives back what it was handed so far.
pub(crate) struct Acquire<'a> {
    sem: &'a Semaphore,
    op: &'static str,
    at: Option<&'static Location<'static>>,
    n: usize,
    waiter: Option<Arc<Waiter>>,
    done: bool,
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.done {
            panic!("Acquire polled after completion");
        }
        let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
        let mut stale = None;
        let result = match &this.waiter {
            None => {
                std::task::ready!(this.sem.state.poll_write_point_at(this.op, this.at));
                let n = this.n;
                this.sem.state.with_mut(|c| {
                    if c.closed {
                        return Err(AcquireError(()));
                    }
                    // Free permits only exist while nobody waits: take what is there and queue
                    // for the rest.
                    let take = c.permits.min(n);
                    c.permits -= take;
                    if take == n {
                        return Ok(None);
                    }
                    let waiter = Arc::new(Waiter {
                        needed: AtomicUsize::new(n - take),
                        acquired: AtomicUsize::new(take),
                        queued: AtomicBool::new(true),
                        waker: Mutex::new(Some(cx.waker().clone())),
                    });
                    c.waiters.push_back(waiter.clone());
                    Ok(Some(waiter))
                })
            }
            Some(waiter) => this.sem.state.with_mut(|c| {
                // Closed fails it even when its permits were all handed to it before (tokio's
                // looks at the semaphore's closed bit first); its drop gives them back.
                if c.closed {
                    Err(AcquireError(()))
                } else if waiter.needed.load(Relaxed) == 0 {
                    Ok(None)
                } else {
                    // The replaced waker is dropped later, outside the state's borrow.
                    stale = waiter.swap_waker(cx.waker());
                    Ok(Some(waiter.clone()))
                }
            }),
        };
        drop(stale);
        if !matches!(result, Ok(Some(_))) {
            coop.made_progress();
        }
        match result {
            Ok(None) => {
                this.done = true;
                this.waiter = None;
                this.sem.note_held();
                Poll::Ready(Ok(()))
            }
            Ok(Some(waiter)) => {
                this.waiter = Some(waiter);
                this.sem
                    .state
                    .waiting_at(this.op, this.sem.verbs.waiting, this.at);
                Poll::Pending
            }
            Err(e) => {
                // Given back by `Drop` (what a closed semaphore handed it before closing).
                Poll::Ready(Err(e))
            }
        }
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let Some(waiter) = self.waiter.take() else {
            return;
        };
        if !sim::engine_running() {
            return;
        }
        self.sem.state.write_point();
        let woken = self.sem.state.with_mut(|c| {
            if waiter.queued.load(Relaxed) {
                c.waiters.retain(|w| !Arc::ptr_eq(w, &waiter));
                waiter.queued.store(false, Relaxed);
            }
            // Cancelled (or failed): what it was handed goes to the next in line.
            c.release(waiter.acquired.swap(0, Relaxed))
        });
        wake_all(woken);
        self.sem.wake_on_release();
    }
}

/// Permits borrowed from a [`Semaphore`], given back when dropped.
#[must_use]
pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
    permits: usize,
}

impl<'a> SemaphorePermit<'a> {
    /// Keeps the permits from going back: the semaphore has that many fewer for good.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// How many permits it holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// Takes `other`'s permits into this one (nothing changes at the semaphore).
    ///
    /// # Panics
    /// When `other` is from another semaphore, as tokio's.
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            std::ptr::eq(self.sem, other.sem),
            "merging permits from different semaphore instances"
        );
        self.permits = merged(self.permits, std::mem::take(&mut other.permits));
    }

    /// `n` of its permits as a permit of their own, if it holds that many.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = split_off(&mut self.permits, n)?;
        Some(SemaphorePermit {
            sem: self.sem,
            permits: n,
        })
    }

    /// The semaphore it came from.
    pub fn semaphore(&self) -> &'a Semaphore {
        self.sem
    }
}

/// Two permits' counts as one.
fn merged(a: usize, b: usize) -> usize {
    a.checked_add(b).expect("number of permits overflowed")
}

/// `n` taken from `permits`, if it holds that many.
fn split_off(permits: &mut usize, n: usize) -> Option<usize> {
    if n > *permits {
        return None;
    }
    *permits -= n;
    Some(n)
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.release(self.permits);
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit")
            .field("permits", &self.permits)
            .finish()
    }
}

/// Permits owned through an `Arc<Semaphore>`, given back when dropped.
#[must_use]
pub struct OwnedSemaphorePermit {
    sem: Arc<Semaphore>,
    permits: usize,
}

impl OwnedSemaphorePermit {
    /// Keeps the permits from going back: the semaphore has that many fewer for good.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// How many permits it holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore it came from.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }

    /// Takes `other`'s permits into this one (nothing changes at the semaphore).
    ///
    /// # Panics
    /// When `other` is from another semaphore, as tokio's.
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            Arc::ptr_eq(&self.sem, &other.sem),
            "merging permits from different semaphore instances"
        );
        self.permits = merged(self.permits, std::mem::take(&mut other.permits));
    }

    /// `n` of its permits as a permit of their own, if it holds that many.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = split_off(&mut self.permits, n)?;
        Some(OwnedSemaphorePermit {
            sem: self.sem.clone(),
            permits: n,
        })
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.sem.release(self.permits);
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit")
            .field("permits", &self.permits)
            .finish()
    }
}

/// The semaphore was closed.
#[derive(Debug, PartialEq, Eq)]
pub struct AcquireError(());

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// Why `try_acquire` got no permit.
#[derive(Debug, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore was closed.
    Closed,
    /// Not enough permits are free (or others wait for them first).
    NoPermits,
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}
