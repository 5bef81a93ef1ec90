//! `tokio::task::LocalSet` and `tokio::task::spawn_local`. A braid run is single-threaded, so
//! every task is already "local": a `LocalSet`'s tasks are ordinary braid tasks (interleaved
//! with all the others, not only while the set is awaited or `run_until` runs, as tokio's are).
//! What the set adds is ownership: awaiting it waits until every task it spawned has ended,
//! and dropping it aborts them. `spawn_local` outside a set spawns an ordinary task (tokio
//! panics there).

use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use sim::sync::Shared;

use super::join::{spawn, AbortHandle, JoinHandle};
use super::lock;
use super::wait_list::{wake_all, WaitList};

/// Spawns a task, as `tokio::task::spawn_local` (every braid task may hold `!Send` state).
///
/// ```
/// use std::rc::Rc;
/// use braid::tokio::task;
///
/// braid::check(|| async {
///     let shared = Rc::new(5);
///     let s = shared.clone();
///     assert_eq!(task::spawn_local(async move { *s + 1 }).await.unwrap(), 6);
/// })
/// .assert_holds();
/// ```
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    spawn(future)
}

/// How many of the set's tasks are live, and who waits for none to be.
struct Core {
    live: usize,
    waiters: WaitList,
}

impl Hash for Core {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.live.hash(state);
        self.waiters.len().hash(state);
    }
}

/// A set of tasks owned together, as `tokio::task::LocalSet` (see the module doc for how it
/// differs: its tasks run as ordinary braid tasks).
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
/// use braid::tokio::task::LocalSet;
///
/// braid::check(|| async {
///     let hits = Rc::new(Cell::new(0));
///     let local = LocalSet::new();
///     for _ in 0..2 {
///         let hits = hits.clone();
///         local.spawn_local(async move { hits.set(hits.get() + 1) });
///     }
///     // Awaiting the set waits for all its tasks.
///     local.await;
///     assert_eq!(hits.get(), 2);
/// })
/// .assert_holds();
/// ```
pub struct LocalSet {
    core: Arc<Shared<Core>>,
    tasks: Mutex<Vec<AbortHandle>>,
    ticket: Option<u64>,
}

impl LocalSet {
    /// An empty set.
    pub fn new() -> Self {
        LocalSet {
            core: Arc::new(Shared::new(
                sim::sync::auto_name("local_set"),
                Core {
                    live: 0,
                    waiters: WaitList::default(),
                },
            )),
            tasks: Mutex::new(Vec::new()),
            ticket: None,
        }
    }

    /// Spawns a task owned by the set.
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.core.write_point();
        self.core.with_mut(|c| c.live += 1);
        let done = Done {
            core: self.core.clone(),
        };
        let handle = spawn(async move {
            let _done = done;
            future.await
        });
        lock(&self.tasks).push(handle.abort_handle());
        handle
    }

    /// Runs `future` to completion; the set's tasks run meanwhile (and after: every braid task
    /// runs whenever the schedule picks it).
    pub async fn run_until<F: Future>(&self, future: F) -> F::Output {
        future.await
    }

    /// Enters the set's context: a no-op under braid, kept for tokio's shape.
    pub fn enter(&self) -> LocalEnterGuard {
        LocalEnterGuard(())
    }
}

/// Counts a task of the set out when it ends, or is dropped (aborted).
struct Done {
    core: Arc<Shared<Core>>,
}

impl Drop for Done {
    fn drop(&mut self) {
        if !sim::engine_running() {
            return;
        }
        self.core.write_point();
        let wakers = self.core.with_mut(|c| {
            c.live -= 1;
            match c.live {
                0 => c.waiters.take_all(),
                _ => Vec::new(),
            }
        });
        wake_all(wakers);
    }
}

impl Future for LocalSet {
    type Output = ();

    /// Ready when every task spawned on the set has ended.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        this.core.read_point();
        let ticket = &mut this.ticket;
        let mut stale = None;
        let ready = this.core.with_mut(|c| {
            if c.live == 0 {
                stale = c.waiters.remove(ticket.take());
                return Poll::Ready(());
            }
            stale = c.waiters.register(ticket, cx.waker());
            Poll::Pending
        });
        // Outside the state's borrow: a waker's drop may reach this set again.
        drop(stale);
        ready
    }
}

impl Drop for LocalSet {
    fn drop(&mut self) {
        if !sim::engine_running() {
            return;
        }
        if self.ticket.is_some() {
            let ticket = self.ticket.take();
            self.core.with_mut(|c| c.waiters.remove(ticket));
        }
        // Dropping the set drops its tasks, as tokio's.
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

impl Default for LocalSet {
    fn default() -> Self {
        LocalSet::new()
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet").finish_non_exhaustive()
    }
}

/// The guard of [`LocalSet::enter`].
#[derive(Debug)]
pub struct LocalEnterGuard(());

#[cfg(test)]
mod tests {
    use crate::tokio::{sync::oneshot, task::LocalSet};

    /// Dropping the set aborts its tasks; awaiting it waits for them.
    #[test]
    fn drop_aborts_await_waits() {
        crate::check(|| async {
            let (held_tx, held_rx) = oneshot::channel::<()>();
            let local = LocalSet::new();
            local.spawn_local(async move {
                let _held = held_tx;
                std::future::pending::<()>().await;
            });
            drop(local);
            assert!(held_rx.await.is_err());

            let (tx, rx) = oneshot::channel::<u32>();
            let local = LocalSet::new();
            local.spawn_local(async move { tx.send(5).unwrap() });
            local.await;
            assert_eq!(rx.await.unwrap(), 5);
        })
        .runs(2_000)
        .assert_holds();
    }
}
