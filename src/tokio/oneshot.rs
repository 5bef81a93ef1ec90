//! A oneshot channel, as tokio's: `send` is synchronous and fails if the receiver is gone;
//! awaiting the receiver yields the value, or an error once the sender is dropped unsent.
//!
//! Every operation that reads or writes the shared state is a scheduling point right before
//! it, drops of either half included (tokio's are atomic operations another thread can race
//! with), and so is every poll of the receiver.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::lock;
use sim::sync::Shared;

/// The state the engine sees (a change is a write, a look a read): 0 empty, 1 a value waits,
/// 2 the sender is gone, 3 the receiver is gone. The value and the waker sit in
/// `std::sync::Mutex`es (never contended: one thread runs a simulation, and each is held for
/// one statement), so both halves are `Send + Sync` when `T: Send`, as tokio's.
struct Chan<T> {
    seen: Shared<u8>,
    value: Mutex<Option<T>>,
    waker: Mutex<Option<Waker>>,
    /// Whoever awaits `Sender::closed`.
    tx_waker: Mutex<Option<Waker>>,
}

/// Creates a oneshot channel (named `oneshot#1`, ... in traces).
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let chan = Arc::new(Chan {
        seen: Shared::new(sim::sync::auto_name("oneshot"), 0u8),
        value: Mutex::new(None),
        waker: Mutex::new(None),
        tx_waker: Mutex::new(None),
    });
    (
        Sender {
            chan: Some(chan.clone()),
        },
        Receiver {
            chan,
            terminated: false,
        },
    )
}

/// The sending half.
pub struct Sender<T> {
    chan: Option<Arc<Chan<T>>>,
}

impl<T> Sender<T> {
    /// Sends the value, or gives it back if the receiver is gone.
    pub fn send(mut self, value: T) -> Result<(), T> {
        // The point first: a task killed there (its node crashed) still drops a sender that
        // holds the channel, so the receiver learns it is gone.
        if let Some(chan) = &self.chan {
            chan.seen.write_point_as("send");
        }
        let chan = self.chan.take().expect("a sender sends once");
        if chan.seen.with(|s| *s == 3) {
            return Err(value);
        }
        *lock(&chan.value) = Some(value);
        chan.seen.with_mut(|s| *s = 1);
        let waker = lock(&chan.waker).take();
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.chan.as_ref().is_none_or(|c| {
            c.seen.read_point_as("is_closed");
            c.seen.with(|s| *s == 3)
        })
    }

    /// Waits until the receiver is dropped or [closed](Receiver::close), as tokio's.
    ///
    /// ```
    /// use braid::tokio::{self, sync::oneshot};
    ///
    /// braid::check(|| async {
    ///     let (mut tx, rx) = oneshot::channel::<u32>();
    ///     tokio::spawn(async move { drop(rx) });
    ///     tx.closed().await;
    ///     assert!(tx.is_closed());
    /// })
    /// .assert_holds();
    /// ```
    pub async fn closed(&mut self) {
        let Some(chan) = self.chan.clone() else {
            return;
        };
        std::future::poll_fn(|cx| {
            let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
            chan.seen.read_point_as("closed");
            if chan.seen.with(|s| *s == 3) {
                coop.made_progress();
                return Poll::Ready(());
            }
            // The replaced waker is dropped outside the slot's lock: its drop may reach here.
            let stale = lock(&chan.tx_waker).replace(cx.waker().clone());
            drop(stale);
            chan.seen.waiting("closed", "receiver open");
            Poll::Pending
        })
        .await
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Some(chan) = self.chan.take() {
            if sim::engine_running() {
                chan.seen.write_point_as("drop sender");
                chan.seen.with_mut(|s| {
                    if *s == 0 {
                        *s = 2;
                    }
                });
            }
            let waker = lock(&chan.waker).take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

/// The receiving half: await it for the value.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
    /// It has yielded its value or its error: polled again, it panics, as tokio's.
    terminated: bool,
}

impl<T> Receiver<T> {
    /// Closes the channel without dropping the receiver: a later `send` fails, and a value
    /// sent before is still received, as tokio's.
    ///
    /// ```
    /// use braid::tokio::sync::oneshot;
    ///
    /// braid::check(|| async {
    ///     let (tx, mut rx) = oneshot::channel::<u32>();
    ///     rx.close();
    ///     assert_eq!(tx.send(1), Err(1));
    ///     assert!(rx.await.is_err());
    /// })
    /// .assert_holds();
    /// ```
    pub fn close(&mut self) {
        self.chan.seen.write_point_as("close");
        self.chan.seen.with_mut(|s| {
            if *s == 0 {
                *s = 3;
            }
        });
        let waker = lock(&self.chan.tx_waker).take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The value if it has been sent, without waiting.
    pub fn try_recv(&mut self) -> Result<T, error::TryRecvError> {
        if self.terminated {
            return Err(error::TryRecvError::Closed);
        }
        self.chan.seen.write_point_as("try_recv");
        let got = match self.chan.seen.with(|s| *s) {
            1 => Ok(self.take()),
            2 | 3 => Err(error::TryRecvError::Closed),
            _ => return Err(error::TryRecvError::Empty),
        };
        self.terminated = true;
        got
    }

    /// Whether it has yielded its value or its error (polling it again would panic).
    pub fn is_terminated(&self) -> bool {
        self.terminated
    }

    /// Whether no value waits in the channel: none sent yet, the sender gone without one,
    /// the channel closed, or the receiver terminated (a read of the channel, unless it is).
    pub fn is_empty(&self) -> bool {
        if self.terminated {
            return true;
        }
        self.chan.seen.read_point_as("is_empty");
        self.chan.seen.with(|s| *s != 1)
    }

    fn take(&self) -> T {
        self.chan.seen.with_mut(|s| *s = 2);
        lock(&self.chan.value).take().expect("a sent value")
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, error::RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        assert!(!this.terminated, "called after complete");
        let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
        std::task::ready!(this.chan.seen.poll_write_point_at("recv", None));
        match this.chan.seen.with(|s| *s) {
            1 => {
                this.terminated = true;
                coop.made_progress();
                Poll::Ready(Ok(this.take()))
            }
            2 | 3 => {
                this.terminated = true;
                coop.made_progress();
                Poll::Ready(Err(error::RecvError(())))
            }
            _ => {
                // The waker it replaces is dropped outside the slot's lock: a waker's drop may
                // reach this channel again.
                let old = lock(&this.chan.waker).replace(cx.waker().clone());
                drop(old);
                this.chan.seen.waiting("recv", "no value sent");
                Poll::Pending
            }
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if sim::engine_running() {
            self.chan.seen.write_point_as("drop receiver");
            self.chan.seen.with_mut(|s| {
                if *s == 0 {
                    *s = 3;
                }
            });
        }
        let waker = lock(&self.chan.tx_waker).take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// `tokio::sync::oneshot::error`.
pub mod error {
    use std::fmt;

    /// The sender was dropped without sending.
    #[derive(Debug, PartialEq, Eq)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` found no value.
    #[derive(Debug, PartialEq, Eq)]
    pub enum TryRecvError {
        /// Not sent yet.
        Empty,
        /// The sender was dropped without sending, or the value was taken.
        Closed,
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}
