//! A tokio-shaped facade: the paths, signatures and documented behaviour of `tokio` over
//! braid's engine, so code written for tokio runs under braid with one line changed.
//!
//! Two ways to switch, both leaving the code below them as it is (`tokio::spawn`,
//! `tokio::sync::mpsc::channel`, `tokio::select!`, ...):
//!
//! ```ignore
//! // 1. A cfg alias, as madsim does: build the simulation with RUSTFLAGS="--cfg madsim".
//! #[cfg(madsim)]
//! use braid::tokio;
//!
//! // 2. Or always, in test code: the module under tokio's name.
//! use braid::tokio as tokio;
//! ```
//!
//! (A Cargo rename, `tokio = { package = "braid" }`, cannot work: the facade is a module of
//! braid, not its root. Under the cfg alias, the real `tokio` dependency may stay in
//! `Cargo.toml`; the `use` shadows it in that file.)
//!
//! What is here:
//! - [`spawn`], [`task`]: `spawn`, `yield_now`, [`JoinHandle`](task::JoinHandle) (await it,
//!   `abort`, `is_finished`, `abort_handle`), [`JoinError`](task::JoinError)
//!   (`is_cancelled`), [`JoinSet`](task::JoinSet), `spawn_blocking` and `spawn_local` (each an
//!   ordinary task), [`LocalSet`](task::LocalSet), task-locals
//!   ([`task_local!`](crate::tokio::task_local)).
//! - [`join!`](crate::tokio::join), [`try_join!`](crate::tokio::try_join),
//!   [`pin!`](crate::tokio::pin).
//! - [`sync`]: `Mutex`, `RwLock`, `Semaphore` (fair, FIFO, as tokio's), `Notify`, `oneshot`,
//!   `mpsc` (bounded, with back-pressure and `reserve`; unbounded), `watch`, `broadcast`,
//!   `Barrier`, `OnceCell`, `SetOnce`.
//! - [`select!`](crate::tokio::select): random branch order as a scheduling decision,
//!   `biased;`, `, if` preconditions, `else`; the losing branches are dropped.
//! - [`time`]: `sleep`, `sleep_until`, `timeout`, `interval`, `Instant`, `Duration`, in virtual
//!   time: a sleep never waits on the wall clock; when every task waits and timers are pending,
//!   time jumps to the next deadline, and timers due at the same instant fire in an order the
//!   strategy picks. Time may also jump to the next deadline while a task can still run, once
//!   per run by default ([`Check::clock_jumps`](crate::Check::clock_jumps)), as a real clock
//!   moves on while a task is slow: so a reply woken at 5 ms can still lose to a 10 ms
//!   timeout. `clock_jumps(0)` is tokio's paused clock. `pause` makes it tokio's paused clock for the
//!   rest of the run and `resume` undoes it; `advance(d)` sleeps `d`.
//!
//! Every operation on a `sync` item is a scheduling point right before it touches shared state
//! (with stackful tasks; until then, the points are where a task waits), and a task that must
//! wait stores its waker and returns `Pending`, as tokio's futures do: so each of them can be
//! dropped while it waits (a `select!` loser, a `timeout`) and leaves its wait list cleanly.
//! Wait lists are kept in arrival order, so runs are deterministic.
//!
//! `Send` and `Sync`: every type here, and the future of every async method, is `Send` and
//! `Sync` where tokio's is (`Arc<Notify>` shared between tasks, `Mutex<T>` when `T: Send`, a
//! `JoinHandle<T>` when `T: Send`, the `lock()`, `send()`, `recv()`, `acquire()`, `notified()`
//! futures), so code with tokio's `Send` bounds builds unchanged. Their state sits in
//! `std::sync` locks and atomics, never contended (a run is single-threaded) and never held
//! across a scheduling point; on a thread with no run in progress, an operation panics.
//!
//! Drops and clones count as operations: dropping a guard, a permit or a channel half, and
//! cloning a sender, is a scheduling point right before it changes shared state, as each is an
//! atomic operation another thread can race with in tokio; so is creating a `Notified`, which
//! reads the `notify_waiters` count, and a task's end, which is a step of its own.
//!
//! Differences from tokio: `spawn` does not need a `Send` future (a run is single-threaded);
//! a task's panic reaches its joiner as a `JoinError` (`is_panic`), but one nobody observes
//! fails the run at its end (tokio would only print it); when the test body returns, the
//! tasks left are dropped, as tokio's runtime drops them; constructors are not `const` (a
//! primitive is an object of the run it is created in).
//!
//! ```
//! use std::time::Duration;
//! use braid::tokio::{self, sync::oneshot, time};
//!
//! braid::check(|| async {
//!     let (tx, rx) = oneshot::channel::<u32>();
//!     tokio::spawn(async move {
//!         time::sleep(Duration::from_millis(5)).await;
//!         let _ = tx.send(1);
//!     });
//!     // The reply comes at 5 ms, before the deadline: on a paused clock, in every schedule.
//!     assert_eq!(time::timeout(Duration::from_millis(10), rx).await.unwrap().unwrap(), 1);
//! })
//! .clock_jumps(0)
//! .assert_holds();
//! ```

mod barrier;
mod blocking;
mod broadcast;
mod coop;
pub mod fs;
pub mod io;
mod join;
mod join_macro;
mod join_set;
mod local_set;
mod mpsc;
mod mutex;
pub mod net;
mod notify;
mod once_cell;
mod oneshot;
mod pin;
mod rwlock;
mod select;
mod semaphore;
mod set_once;
mod task_local;
mod wait_list;
mod watch;

pub use join::spawn;

#[doc(hidden)]
pub use coop::poll_budget_available as __poll_budget_available;
#[doc(hidden)]
pub use select::restart as __select_restart;
#[doc(hidden)]
pub use select::start as __select_start;

#[doc(hidden)]
pub mod __join_private {
    pub use super::join_macro::{count, maybe_done, rotate, MaybeDone, TryOutput};
}

#[doc(hidden)]
pub mod __task_local_private {
    pub use super::task_local::Slots;
}

/// Waits on several futures concurrently in the current task until all complete, as
/// `tokio::join!`: each poll polls every unfinished branch, starting one further along each
/// time, or in the order written with `biased;`.
///
/// ```
/// use braid::tokio;
///
/// braid::check(|| async {
///     let (a, b) = tokio::join!(async { 1 }, tokio::spawn(async { 2 }));
///     assert_eq!((a, b.unwrap()), (1, 2));
/// })
/// .assert_holds();
/// ```
#[doc(inline)]
pub use crate::__braid_tokio_join as join;

/// Waits on several `Result` futures concurrently until all succeed or one fails, as
/// `tokio::try_join!`.
///
/// ```
/// use braid::tokio;
///
/// braid::check(|| async {
///     let r: Result<(u8, u8), ()> = tokio::try_join!(async { Ok(1) }, async { Ok(2) });
///     assert_eq!(r, Ok((1, 2)));
/// })
/// .assert_holds();
/// ```
#[doc(inline)]
pub use crate::__braid_tokio_try_join as try_join;

/// Declares task-local keys, as `tokio::task_local!` (a value per task, set by
/// `KEY.scope(value, future)`).
///
/// ```
/// use braid::tokio;
///
/// tokio::task_local! {
///     static ID: u32;
/// }
///
/// braid::check(|| async {
///     assert_eq!(ID.scope(9, async { ID.get() }).await, 9);
/// })
/// .assert_holds();
/// ```
#[doc(inline)]
pub use crate::__braid_tokio_task_local as task_local;

/// Pins values on the stack, as `tokio::pin!`.
///
/// ```
/// use braid::tokio;
///
/// braid::check(|| async {
///     let f = async { 1 };
///     tokio::pin!(f);
///     assert_eq!(f.await, 1);
/// })
/// .assert_holds();
/// ```
#[doc(inline)]
pub use crate::__braid_tokio_pin as pin;

/// Waits on several futures at once, as `tokio::select!`: the first to complete whose output
/// matches its pattern wins, the others are dropped (cancelled) before its handler runs.
///
/// Without `biased;`, which branch is polled first is a scheduling decision (the strategy
/// picks it among the enabled branches, and replays it), so every order in which ready
/// branches can win is explored; with `biased;` they are polled in the order written.
/// `pattern = future, if condition => handler` disables a branch whose condition is false; a
/// branch whose output does not match its pattern is disabled; `else => expression` runs when
/// every branch is disabled (without it, that panics, as in tokio).
///
/// ```
/// use braid::tokio::{self, sync::mpsc};
///
/// braid::check(|| async {
///     let (tx, mut rx) = mpsc::channel::<u32>(1);
///     tx.send(1).await.unwrap();
///     let got = tokio::select! {
///         biased;
///         Some(v) = rx.recv() => v,
///         _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => 0,
///     };
///     assert_eq!(got, 1);
/// })
/// .assert_holds();
/// ```
#[doc(inline)]
pub use crate::__braid_tokio_select as select;

/// `tokio::task`: spawning, joining, aborting, yielding; `JoinSet`, `LocalSet`, task-locals.
pub mod task {
    pub use super::blocking::spawn_blocking;
    pub use super::join::{spawn, AbortHandle, JoinError, JoinHandle};
    pub use super::join_set::JoinSet;
    pub use super::local_set::{spawn_local, LocalEnterGuard, LocalSet};
    pub use super::task_local::{AccessError, LocalKey};

    /// `tokio::task::coop`: the cooperative budget (see `poll_proceed`). Each poll of a task
    /// may find tokio's resources ready 128 times; past that they return `Pending`, so that a
    /// `select!` around a busy loop polls its other branches, as under tokio.
    ///
    /// ```
    /// use braid::tokio;
    ///
    /// braid::check(|| async {
    ///     let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    ///     // The loop's receives are always ready: the budget ends its poll, and the biased
    ///     // select! polls the yield.
    ///     tokio::select! {
    ///         biased;
    ///         _ = async {
    ///             loop {
    ///                 tx.send(()).unwrap();
    ///                 rx.recv().await.unwrap();
    ///             }
    ///         } => unreachable!(),
    ///         _ = tokio::task::yield_now() => {}
    ///     }
    /// })
    /// .runs(20)
    /// .assert_holds();
    /// ```
    pub mod coop {
        pub use crate::tokio::coop::{
            consume_budget, cooperative, has_budget_remaining, poll_proceed, unconstrained, Coop,
            RestoreOnPending, Unconstrained,
        };
    }
    #[doc(hidden)]
    pub use coop::{consume_budget, unconstrained, Unconstrained};

    /// `tokio::task::futures`.
    pub mod futures {
        pub use crate::tokio::task_local::TaskLocalFuture;
    }

    /// Yields, as `tokio::task::yield_now`: the other tasks may run first, or this one may
    /// be polled again at once, as tokio's runtime may do. Going on at once is allowed once
    /// per cycle of yields (a yield right after one that went on at once is fair: the others
    /// move first), so a spin-wait on `yield_now` is still proved, and one that can never make
    /// progress is still a `livelock`.
    ///
    /// ```
    /// use braid::tokio;
    ///
    /// braid::check(|| async {
    ///     tokio::task::yield_now().await;
    /// })
    /// .assert_holds();
    /// ```
    pub async fn yield_now() {
        sim::yield_like_tokio().await;
    }
}

/// `tokio::sync`.
pub mod sync {
    pub use super::barrier::{Barrier, BarrierWaitResult};
    pub use super::mutex::{Mutex, MutexGuard, OwnedMutexGuard, TryLockError};
    pub use super::notify::{Notified, Notify};
    pub use super::once_cell::{OnceCell, SetError};
    pub use super::rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use super::semaphore::{
        AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
    };
    pub use super::set_once::{SetOnce, SetOnceError};

    /// `tokio::sync::oneshot`: one value from one task to another.
    pub mod oneshot {
        pub use crate::tokio::oneshot::{channel, error, Receiver, Sender};
    }

    /// `tokio::sync::mpsc`: multi-producer, single-consumer queues, bounded (`send` waits
    /// while full) or unbounded.
    pub mod mpsc {
        pub use crate::tokio::mpsc::{
            channel, error, unbounded_channel, OwnedPermit, Permit, PermitIterator, Receiver,
            Sender, UnboundedReceiver, UnboundedSender,
        };
    }

    /// `tokio::sync::watch`: the latest value, and a wake-up when it changes.
    pub mod watch {
        pub use crate::tokio::watch::{channel, error, Receiver, Ref, Sender};
    }

    /// `tokio::sync::broadcast`: every value to every receiver, lagging receivers told so.
    pub mod broadcast {
        pub use crate::tokio::broadcast::{channel, error, Receiver, Sender};
    }
}

pub mod time;

/// A std `Mutex` of the facade's own bookkeeping (a waker slot, a task's output), locked: a
/// panic while it was held (a test failing and unwinding) leaves nothing worth refusing.
fn lock<T>(slot: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
