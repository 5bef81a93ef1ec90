//! The unbounded channel: `send` is synchronous and never waits.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::chan::{Chan, ClosedWait};
use super::error::{SendError, TryRecvError};

/// A channel without a bound (named `channel#1`, ... in traces).
///
/// ```
/// use braid::tokio::sync::mpsc;
///
/// braid::check(|| async {
///     let (tx, mut rx) = mpsc::unbounded_channel();
///     for i in 0..100 {
///         tx.send(i).unwrap(); // never waits
///     }
///     drop(tx);
///     let mut n = 0;
///     while let Some(i) = rx.recv().await {
///         assert_eq!(i, n);
///         n += 1;
///     }
///     assert_eq!(n, 100);
/// })
/// .assert_holds();
/// ```
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = Arc::new(Chan::new(None));
    (
        UnboundedSender { chan: chan.clone() },
        UnboundedReceiver { chan },
    )
}

/// The sending half (clone it for more senders).
pub struct UnboundedSender<T> {
    chan: Arc<Chan<T>>,
}

impl<T> UnboundedSender<T> {
    /// Queues `value` without waiting; gives it back if the receiver closed the channel or is
    /// gone.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.chan.state.write_point_as("send");
        self.chan.push(value, true).map_err(SendError)
    }

    /// Waits until the receiver closes the channel or is gone.
    pub async fn closed(&self) {
        ClosedWait {
            chan: &self.chan,
            ticket: None,
        }
        .wait()
        .await
    }

    /// Whether the receiver closed the channel or is gone.
    pub fn is_closed(&self) -> bool {
        self.chan.is_closed()
    }

    /// Whether both send on the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for UnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        UnboundedSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for UnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> fmt::Debug for UnboundedSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedSender").finish_non_exhaustive()
    }
}

/// The receiving half.
pub struct UnboundedReceiver<T> {
    chan: Arc<Chan<T>>,
}

impl<T> UnboundedReceiver<T> {
    /// Waits for the next message: `None` once every sender is gone (or the channel was
    /// closed) and nothing is queued.
    #[track_caller]
    pub fn recv(&mut self) -> impl std::future::Future<Output = Option<T>> + '_ {
        self.chan.recv(std::panic::Location::caller())
    }

    /// The next message if one is queued now.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.chan.state.write_point_as("try_recv");
        self.chan.try_recv()
    }

    /// Polls for the next message (for hand-written futures): each poll is a scheduling point.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.chan.state.write_point_as("poll_recv");
        self.chan.poll_recv(cx, None)
    }

    /// Waits for messages and appends up to `limit` of those queued to `buffer`: how many, 0
    /// once every sender is gone (or the channel was closed) and nothing is queued, or for a
    /// limit of 0.
    #[track_caller]
    pub fn recv_many<'a>(
        &'a mut self,
        buffer: &'a mut Vec<T>,
        limit: usize,
    ) -> impl std::future::Future<Output = usize> + 'a {
        self.chan
            .recv_many(buffer, limit, std::panic::Location::caller())
    }

    /// Polls for messages, as `recv_many` (each poll a scheduling point).
    pub fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        self.chan.state.write_point_as("poll_recv_many");
        self.chan.poll_recv_many(cx, buffer, limit, None)
    }

    /// Closes the channel: sends fail from now on; what is queued can still be received.
    pub fn close(&mut self) {
        self.chan.state.write_point_as("close");
        self.chan.close();
    }

    /// Whether the channel is closed: by `close`, or because every sender is gone.
    pub fn is_closed(&self) -> bool {
        self.chan.rx_is_closed()
    }

    /// How many messages are queued.
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// Whether no message is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for UnboundedReceiver<T> {
    fn drop(&mut self) {
        self.chan.drop_receiver();
    }
}

impl<T> fmt::Debug for UnboundedReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedReceiver").finish_non_exhaustive()
    }
}
