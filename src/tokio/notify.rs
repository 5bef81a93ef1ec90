//! `tokio::sync::Notify`: `notify_one` wakes the longest waiter or, if none waits, stores one
//! permit that the next `notified().await` consumes at once; `notify_waiters` wakes every
//! waiter and stores nothing. A lost wakeup with `notify_waiters` is therefore a real bug the
//! exploration can find.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::lock;
use sim::sync::Shared;

/// How a waiter was woken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Woken {
    /// By `notify_one`: the notification is its to consume, or to pass on if it is dropped.
    One,
    /// By `notify_last`: the same, passed on to the last waiter.
    Last,
    /// By `notify_waiters`.
    All,
}

/// A waiter. Its fields sit in `std::sync::Mutex`es rather than cells (never contended: each
/// is touched under the notify's own state lock, for one statement), so `Notify` and
/// `Notified` are `Send + Sync`, as tokio's.
struct Node {
    woken: Mutex<Option<Woken>>,
    waker: Mutex<Option<Waker>>,
}

impl Node {
    fn woken(&self) -> Option<Woken> {
        *lock(&self.woken)
    }

    /// Marks it woken; its waker, to wake once the notify's state is no longer borrowed.
    fn wake(&self, how: Woken) -> Option<Waker> {
        *lock(&self.woken) = Some(how);
        lock(&self.waker).take()
    }
}

/// The engine sees every change as a write; it hashes the permit, the `notify_waiters` count
/// and the number waiting.
struct Core {
    permit: bool,
    /// How many times `notify_waiters` was called: a `Notified` created before a call completes
    /// even if it was not polled yet, as tokio specifies.
    generation: u64,
    waiters: VecDeque<Arc<Node>>,
}

impl Hash for Core {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.permit.hash(state);
        self.generation.hash(state);
        self.waiters.len().hash(state);
    }
}

impl Core {
    /// `notify_one`'s effect: the first waiter is woken, else the permit is stored.
    fn notify_one(&mut self) -> Option<Waker> {
        let first = self.waiters.pop_front();
        self.notify(first, Woken::One)
    }

    /// `notify_last`'s effect: the last waiter is woken, else the permit is stored.
    fn notify_last(&mut self) -> Option<Waker> {
        let last = self.waiters.pop_back();
        self.notify(last, Woken::Last)
    }

    /// `waiter` woken `how`, or, if nobody waits, the permit stored.
    fn notify(&mut self, waiter: Option<Arc<Node>>, how: Woken) -> Option<Waker> {
        match waiter {
            Some(node) => node.wake(how),
            None => {
                self.permit = true;
                None
            }
        }
    }
}

/// Wakes waiting tasks, as `tokio::sync::Notify`.
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::Notify};
///
/// braid::check(|| async {
///     let ready = Arc::new(Notify::new());
///     let r = ready.clone();
///     let waiter = tokio::spawn(async move { r.notified().await });
///     // Whether or not the waiter waits yet: the permit is stored for it.
///     ready.notify_one();
///     waiter.await.unwrap();
/// })
/// .assert_holds();
/// ```
pub struct Notify {
    state: Shared<Core>,
}

impl Notify {
    /// A notify named `notify#1`, `notify#2`, ... in traces.
    pub fn new() -> Self {
        Notify {
            state: Shared::new(
                sim::sync::auto_name("notify"),
                Core {
                    permit: false,
                    generation: 0,
                    waiters: VecDeque::new(),
                },
            ),
        }
    }

    /// Wakes the task that has waited longest or, if none waits, stores a permit (at most
    /// one) for the next `notified().await`.
    pub fn notify_one(&self) {
        self.state.write_point_as("notify_one");
        if let Some(w) = self.state.with_mut(Core::notify_one) {
            w.wake();
        }
    }

    /// Wakes the task that started waiting last or, if none waits, stores a permit (tokio's
    /// `notify_last`).
    pub fn notify_last(&self) {
        self.state.write_point_as("notify_last");
        if let Some(w) = self.state.with_mut(Core::notify_last) {
            w.wake();
        }
    }

    /// Wakes every task waiting now, and every `Notified` created before this call; stores no
    /// permit, so a task that starts waiting afterwards waits for the next notification.
    pub fn notify_waiters(&self) {
        self.state.write_point_as("notify_waiters");
        let woken: Vec<Waker> = self.state.with_mut(|c| {
            c.generation += 1;
            c.waiters
                .drain(..)
                .filter_map(|node| node.wake(Woken::All))
                .collect()
        });
        for w in woken {
            w.wake();
        }
    }

    /// Waits for a notification: a stored permit (consumed), a `notify_one`, or a
    /// `notify_waiters` called after this `Notified` was created.
    ///
    /// Creating it reads the `notify_waiters` count, a scheduling point: between a check of a
    /// flag and this call another task may notify (the classic lost wakeup).
    #[track_caller]
    pub fn notified(&self) -> Notified<'_> {
        let at = Some(std::panic::Location::caller());
        self.state.read_point_at("notified", at);
        Notified {
            at,
            notify: self,
            generation: self.state.with(|c| c.generation),
            node: None,
            done: false,
        }
    }
}

impl Default for Notify {
    fn default() -> Self {
        Notify::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify").finish_non_exhaustive()
    }
}

/// The future of [`Notify::notified`]: queued at its first poll; dropped after a
/// `notify_one` chose it but before it completed, it passes the notification on.
#[must_use = "futures do nothing unless awaited"]
pub struct Notified<'a> {
    notify: &'a Notify,
    /// Where the user called `notified()`, for traces and deadlocks.
    at: Option<&'static std::panic::Location<'static>>,
    generation: u64,
    node: Option<Arc<Node>>,
    done: bool,
}

impl Notified<'_> {
    /// Queues it as a waiter now, as its first poll would, without a waker: from now on a
    /// `notify_one` may choose it (tokio's `enable`). `true` if it is notified already, so
    /// that its next poll completes.
    pub fn enable(self: Pin<&mut Self>) -> bool {
        let this = self.get_mut();
        if this.done {
            return true;
        }
        if this.node.is_none() {
            this.notify.state.write_point_at("enable", this.at);
        }
        this.attempt(None).is_ready()
    }

    /// After its scheduling point: notified (a permit taken, a `notify_waiters` since it was
    /// made, or chosen by a `notify_one`), or queued with `waker` (kept, or replaced).
    fn attempt(&mut self, waker: Option<&Waker>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        let state = &self.notify.state;
        let ready = match &self.node {
            None => {
                let generation = self.generation;
                state.with_mut(|c| {
                    if c.generation != generation {
                        return None;
                    }
                    if std::mem::take(&mut c.permit) {
                        return None;
                    }
                    let node = Arc::new(Node {
                        woken: Mutex::new(None),
                        waker: Mutex::new(waker.cloned()),
                    });
                    c.waiters.push_back(node.clone());
                    Some(node)
                })
            }
            Some(node) => {
                let (ready, old) = state.with_mut(|_| match node.woken() {
                    Some(_) => (None, None),
                    None => {
                        let old = waker.and_then(|w| lock(&node.waker).replace(w.clone()));
                        (Some(node.clone()), old)
                    }
                });
                // A waker's drop may reach this notify again: outside its state's borrow.
                drop(old);
                ready
            }
        };
        match ready {
            None => {
                self.done = true;
                self.node = None;
                Poll::Ready(())
            }
            Some(node) => {
                self.node = Some(node);
                if waker.is_some() {
                    state.waiting_at("notified", "not notified", self.at);
                }
                Poll::Pending
            }
        }
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        if !this.done && this.node.is_none() {
            std::task::ready!(this.notify.state.poll_write_point_at("notified", this.at));
        }
        this.attempt(Some(cx.waker()))
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        let Some(node) = self.node.take() else {
            return;
        };
        if !sim::engine_running() {
            return;
        }
        self.notify.state.write_point_as("drop notified");
        let forwarded = self.notify.state.with_mut(|c| match node.woken() {
            None => {
                c.waiters.retain(|n| !Arc::ptr_eq(n, &node));
                None
            }
            // Chosen by `notify_one` but never completed: the next waiter gets it instead
            // (the last one, for `notify_last`).
            Some(Woken::One) => c.notify_one(),
            Some(Woken::Last) => c.notify_last(),
            Some(Woken::All) => None,
        });
        if let Some(w) = forwarded {
            w.wake();
        }
    }
}
