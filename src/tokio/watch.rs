//! `tokio::sync::watch`: one value, the latest sent; each receiver knows which version it has
//! seen, so `changed().await` wakes for a new value but never queues them: two sends before a
//! receiver looks are one change, and it sees only the second value.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

use sim::sync::Shared;

use super::wait_list::{wake_all, WaitList};

/// What the engine tracks (the value itself stays beside it, in a `std::sync::RwLock`, as
/// tokio's: a borrow of it is handed out): the version, who is still there, and who waits.
struct Meta {
    version: u64,
    senders: usize,
    receivers: usize,
    changed_waiters: WaitList,
    closed_waiters: WaitList,
}

impl Hash for Meta {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.version.hash(state);
        self.senders.hash(state);
        self.receivers.hash(state);
        self.changed_waiters.len().hash(state);
    }
}

/// The value is in a `std::sync::RwLock`, as in tokio, so the halves are `Send + Sync` when
/// `T: Send + Sync`. It is never contended (one thread runs a simulation): a conflict is a
/// `Ref` still held while the value is sent, which panics rather than deadlocks.
struct Chan<T> {
    meta: Shared<Meta>,
    value: RwLock<T>,
}

impl<T> Chan<T> {
    /// The value, for reading.
    fn read(&self) -> RwLockReadGuard<'_, T> {
        match self.value.try_read() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                panic!("a watch value was borrowed while a send is changing it")
            }
        }
    }

    /// The value, for a send.
    fn write(&self) -> RwLockWriteGuard<'_, T> {
        match self.value.try_write() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                panic!("a watch value was sent while a `Ref` to it is held")
            }
        }
    }

    /// A new value is in: the version moves on and every waiting receiver wakes.
    fn bump(&self) {
        let woken = self.meta.with_mut(|m| {
            m.version += 1;
            m.changed_waiters.take_all()
        });
        wake_all(woken);
    }

    fn version(&self) -> u64 {
        self.meta.with(|m| m.version)
    }
}

/// A watch channel holding `init` (named `watch#1`, ... in traces). The receiver starts with
/// `init` seen.
///
/// ```
/// use braid::tokio::{self, sync::watch};
///
/// braid::check(|| async {
///     let (tx, mut rx) = watch::channel("starting");
///     tokio::spawn(async move {
///         tx.send("ready").unwrap();
///     });
///     rx.changed().await.unwrap();
///     assert_eq!(*rx.borrow_and_update(), "ready");
///     assert!(rx.changed().await.is_err()); // the sender is gone
/// })
/// .assert_holds();
/// ```
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let chan = Arc::new(Chan {
        meta: Shared::new(
            sim::sync::auto_name("watch"),
            Meta {
                version: 0,
                senders: 1,
                receivers: 1,
                changed_waiters: WaitList::default(),
                closed_waiters: WaitList::default(),
            },
        ),
        value: RwLock::new(init),
    });
    (Sender { chan: chan.clone() }, Receiver { chan, version: 0 })
}

/// A borrow of the current value. Do not hold it across an `.await`: a send while it is held
/// panics here (in tokio it would deadlock). Not `Send`, as tokio's.
pub struct Ref<'a, T> {
    inner: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

impl<T> Ref<'_, T> {
    /// Whether the value was new to the receiver that borrowed it.
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.inner, f)
    }
}

/// The sending half.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Sender<T> {
    /// Replaces the value and wakes the receivers; fails (giving the value back, the old one
    /// kept) when no receiver is left.
    pub fn send(&self, value: T) -> Result<(), error::SendError<T>> {
        self.chan.meta.write_point_as("send");
        if self.chan.meta.with(|m| m.receivers) == 0 {
            return Err(error::SendError(value));
        }
        let old = std::mem::replace(&mut *self.chan.write(), value);
        self.chan.bump();
        drop(old);
        Ok(())
    }

    /// Replaces the value whether or not a receiver is left; returns the old one.
    pub fn send_replace(&self, value: T) -> T {
        self.chan.meta.write_point_as("send_replace");
        let old = std::mem::replace(&mut *self.chan.write(), value);
        self.chan.bump();
        old
    }

    /// Changes the value in place and wakes the receivers.
    pub fn send_modify(&self, modify: impl FnOnce(&mut T)) {
        self.send_if_modified(|v| {
            modify(v);
            true
        });
    }

    /// Changes the value in place; wakes the receivers only if `modify` says it changed it.
    pub fn send_if_modified(&self, modify: impl FnOnce(&mut T) -> bool) -> bool {
        self.chan.meta.write_point_as("send_if_modified");
        let changed = modify(&mut self.chan.write());
        if changed {
            self.chan.bump();
        }
        changed
    }

    /// The current value.
    pub fn borrow(&self) -> Ref<'_, T> {
        self.chan.meta.read_point_as("borrow");
        self.chan.version();
        Ref {
            inner: self.chan.read(),
            has_changed: false,
        }
    }

    /// A new receiver, with the current value seen.
    pub fn subscribe(&self) -> Receiver<T> {
        self.chan.meta.write_point_as("subscribe");
        let version = self.chan.meta.with_mut(|m| {
            m.receivers += 1;
            m.version
        });
        Receiver {
            chan: self.chan.clone(),
            version,
        }
    }

    /// How many receivers are left.
    pub fn receiver_count(&self) -> usize {
        self.chan.meta.read_point_as("receiver_count");
        self.chan.meta.with(|m| m.receivers)
    }

    /// Whether no receiver is left.
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }

    /// Waits until no receiver is left.
    pub async fn closed(&self) {
        crate::tokio::coop::cooperative(self.closed_inner()).await
    }

    async fn closed_inner(&self) {
        self.chan.meta.read_point_as("closed");
        let mut wait = Wait {
            chan: &self.chan,
            ticket: None,
            list: |m: &mut Meta| &mut m.closed_waiters,
        };
        std::future::poll_fn(|cx| {
            let ticket = &mut wait.ticket;
            let mut stale = None;
            let ready = wait.chan.meta.with_mut(|m| {
                if m.receivers == 0 {
                    std::task::Poll::Ready(())
                } else {
                    stale = m.closed_waiters.register(ticket, cx.waker());
                    wait.chan.meta.waiting("closed", "receivers open");
                    std::task::Poll::Pending
                }
            });
            drop(stale);
            ready
        })
        .await
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.meta.write_point_as("clone sender");
        self.chan.meta.with_mut(|m| m.senders += 1);
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if !sim::engine_running() {
            return;
        }
        self.chan.meta.write_point_as("drop sender");
        let woken = self.chan.meta.with_mut(|m| {
            m.senders -= 1;
            match m.senders {
                0 => m.changed_waiters.take_all(),
                _ => Vec::new(),
            }
        });
        wake_all(woken);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("watch::Sender").finish_non_exhaustive()
    }
}

/// A waiter's ticket in one of the channel's wait lists, forgotten when the wait is dropped
/// (a `select!` loser, a `timeout`).
struct Wait<'a, T> {
    chan: &'a Chan<T>,
    ticket: Option<u64>,
    list: fn(&mut Meta) -> &mut WaitList,
}

impl<T> Drop for Wait<'_, T> {
    fn drop(&mut self) {
        if self.ticket.is_some() && sim::engine_running() {
            let (list, ticket) = (self.list, self.ticket);
            self.chan.meta.write_point_as("drop changed");
            let stale = self.chan.meta.with_mut(|m| list(m).remove(ticket));
            drop(stale);
        }
    }
}

/// A receiving half (clone it for more receivers; each tracks what it has seen).
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
    version: u64,
}

impl<T> Receiver<T> {
    /// The current value, without marking it seen.
    pub fn borrow(&self) -> Ref<'_, T> {
        self.chan.meta.read_point_as("borrow");
        let current = self.chan.version();
        Ref {
            inner: self.chan.read(),
            has_changed: current != self.version,
        }
    }

    /// The current value, marking it seen.
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        self.chan.meta.read_point_as("borrow_and_update");
        let current = self.chan.version();
        let has_changed = current != self.version;
        self.version = current;
        Ref {
            inner: self.chan.read(),
            has_changed,
        }
    }

    /// Whether every sender is gone.
    pub fn is_closed(&self) -> bool {
        self.chan.meta.read_point_as("is_closed");
        self.chan.meta.with(|m| m.senders == 0)
    }

    /// Whether a value not seen yet is there; an error once every sender is gone.
    pub fn has_changed(&self) -> Result<bool, error::RecvError> {
        self.chan.meta.read_point_as("has_changed");
        self.chan.meta.with(|m| match m.senders {
            0 => Err(error::RecvError(())),
            _ => Ok(m.version != self.version),
        })
    }

    /// Waits for a value not seen yet and marks it seen; an error once every sender is gone
    /// and the current value is seen. Dropped while it waits, it marks nothing seen.
    pub async fn changed(&mut self) -> Result<(), error::RecvError> {
        crate::tokio::coop::cooperative(self.changed_inner()).await
    }

    async fn changed_inner(&mut self) -> Result<(), error::RecvError> {
        self.chan.meta.read_point_as("changed");
        let seen = self.version;
        let mut wait = Wait {
            chan: &self.chan,
            ticket: None,
            list: |m: &mut Meta| &mut m.changed_waiters,
        };
        let result = std::future::poll_fn(|cx| {
            let ticket = &mut wait.ticket;
            let mut stale = None;
            let ready = wait.chan.meta.with_mut(|m| {
                if m.version != seen {
                    std::task::Poll::Ready(Ok(m.version))
                } else if m.senders == 0 {
                    std::task::Poll::Ready(Err(error::RecvError(())))
                } else {
                    stale = m.changed_waiters.register(ticket, cx.waker());
                    wait.chan.meta.waiting("changed", "unchanged");
                    std::task::Poll::Pending
                }
            });
            drop(stale);
            ready
        })
        .await;
        drop(wait);
        self.version = result?;
        Ok(())
    }

    /// Waits until the value satisfies `f` (checking the current one first) and returns a
    /// borrow of it, marked seen.
    pub async fn wait_for(
        &mut self,
        f: impl FnMut(&T) -> bool,
    ) -> Result<Ref<'_, T>, error::RecvError> {
        crate::tokio::coop::cooperative(self.wait_for_inner(f)).await
    }

    async fn wait_for_inner(
        &mut self,
        mut f: impl FnMut(&T) -> bool,
    ) -> Result<Ref<'_, T>, error::RecvError> {
        loop {
            let ok = {
                let value = self.borrow_and_update();
                f(&value)
            };
            if ok {
                return Ok(Ref {
                    inner: self.chan.read(),
                    has_changed: false,
                });
            }
            self.changed().await?;
        }
    }

    /// Marks the current value unseen: the next `changed()` completes at once.
    pub fn mark_changed(&mut self) {
        self.chan.meta.read_point_as("mark_changed");
        self.version = self.chan.version().wrapping_sub(1);
    }

    /// Marks the current value seen.
    pub fn mark_unchanged(&mut self) {
        self.chan.meta.read_point_as("mark_unchanged");
        self.version = self.chan.version();
    }

    /// Whether both watch the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.chan.meta.write_point_as("clone receiver");
        self.chan.meta.with_mut(|m| m.receivers += 1);
        Receiver {
            chan: self.chan.clone(),
            version: self.version,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if !sim::engine_running() {
            return;
        }
        self.chan.meta.write_point_as("drop receiver");
        let woken = self.chan.meta.with_mut(|m| {
            m.receivers -= 1;
            match m.receivers {
                0 => m.closed_waiters.take_all(),
                _ => Vec::new(),
            }
        });
        wake_all(woken);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("watch::Receiver").finish_non_exhaustive()
    }
}

/// `tokio::sync::watch::error`.
pub mod error {
    use std::fmt;

    /// No receiver is left; the value comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Every sender is gone.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}
}
