//! The bounded channel: `channel(n)` holds at most `n` messages; `send` waits for a free slot
//! (back-pressure), `reserve` holds one before the message exists.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::chan::{Chan, ClosedWait};
use super::error::{SendError, SendTimeoutError, TryRecvError, TrySendError};
use crate::tokio::semaphore::{Semaphore, TryAcquireError};

/// A channel of at most `buffer` queued messages (named `channel#1`, ... in traces).
///
/// # Panics
/// When `buffer` is 0, as tokio's.
///
/// ```
/// use braid::tokio::{self, sync::mpsc};
///
/// braid::check(|| async {
///     let (tx, mut rx) = mpsc::channel(1);
///     tokio::spawn(async move {
///         for i in 0..3 {
///             tx.send(i).await.unwrap(); // waits while the one slot is taken
///         }
///     });
///     for i in 0..3 {
///         assert_eq!(rx.recv().await, Some(i));
///     }
///     assert_eq!(rx.recv().await, None); // every sender is gone
/// })
/// .assert_holds();
/// ```
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    assert!(buffer > 0, "mpsc bounded channel requires buffer > 0");
    let chan = Arc::new(Chan::new(Some(buffer)));
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// The sending half (clone it for more senders).
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Sender<T> {
    fn slots(&self) -> &Semaphore {
        self.chan
            .slots
            .as_ref()
            .expect("a bounded channel has slots")
    }

    /// Sends `value`, waiting while every slot is taken (first come, first served among
    /// waiting senders); gives it back if the receiver closed the channel or is gone.
    #[track_caller]
    pub fn send(
        &self,
        value: T,
    ) -> impl std::future::Future<Output = Result<(), SendError<T>>> + '_ {
        let at = Some(std::panic::Location::caller());
        async move {
            if self.slots().acquire_at(1, "send", at).await.is_err() {
                return Err(SendError(value));
            }
            // Two steps, as tokio's: the slot is taken, then the message is queued.
            std::future::poll_fn(|_| self.chan.state.poll_write_point_at("send", at)).await;
            self.chan.push(value, false).map_err(SendError)
        }
    }

    /// Sends `value` if a slot is free now: `Full` when none is, `Closed` when the receiver
    /// closed the channel or is gone.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        if let Err(e) = self.try_take_slots(1) {
            return Err(e.with(value));
        }
        self.chan.state.write_point_as("try_send");
        self.chan.push(value, false).map_err(TrySendError::Closed)
    }

    /// Takes `n` slots if they are free now (after the slots' scheduling point): `Full` when
    /// they are not, `Closed` when the receiver closed the channel or is gone.
    fn try_take_slots(&self, n: usize) -> Result<(), TrySendError<()>> {
        self.slots().state_write_point();
        self.slots().try_take(n).map_err(|e| match e {
            TryAcquireError::NoPermits => TrySendError::Full(()),
            TryAcquireError::Closed => TrySendError::Closed(()),
        })
    }

    /// Sends `value`, waiting at most `timeout` for a slot (tokio's: a `reserve` under a
    /// `timeout`); the value comes back in the error.
    pub async fn send_timeout(
        &self,
        value: T,
        timeout: std::time::Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        match crate::tokio::time::timeout(timeout, self.reserve()).await {
            Err(_) => Err(SendTimeoutError::Timeout(value)),
            Ok(Err(_)) => Err(SendTimeoutError::Closed(value)),
            Ok(Ok(permit)) => {
                permit.send(value);
                Ok(())
            }
        }
    }

    /// Waits for a slot and holds it: the [`Permit`] sends without waiting, or gives the slot
    /// back when dropped.
    pub async fn reserve(&self) -> Result<Permit<'_, T>, SendError<()>> {
        if self.slots().acquire_n(1).await.is_err() {
            return Err(SendError(()));
        }
        self.chan.reserve_slot(1);
        Ok(Permit {
            chan: &self.chan,
            used: false,
        })
    }

    /// Waits for `n` slots and holds them: the [`PermitIterator`] yields a [`Permit`] for
    /// each. Fails at once when `n` is more than the channel's bound.
    pub async fn reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, SendError<()>> {
        if n > self.max_capacity() || self.slots().acquire_n(n).await.is_err() {
            return Err(SendError(()));
        }
        Ok(self.permits(n))
    }

    /// `n` slots if they are free now (`Full` when `n` is more than the channel's bound).
    pub fn try_reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, TrySendError<()>> {
        if n > self.max_capacity() {
            return Err(TrySendError::Full(()));
        }
        self.try_take_slots(n)?;
        Ok(self.permits(n))
    }

    /// `n` slots just taken, held as permits.
    fn permits(&self, n: usize) -> PermitIterator<'_, T> {
        self.chan.reserve_slot(n as isize);
        PermitIterator {
            chan: &self.chan,
            n,
        }
    }

    /// A slot if one is free now.
    pub fn try_reserve(&self) -> Result<Permit<'_, T>, TrySendError<()>> {
        self.try_take_slots(1)?;
        self.chan.reserve_slot(1);
        Ok(Permit {
            chan: &self.chan,
            used: false,
        })
    }

    /// [`reserve`](Self::reserve), the permit owning the sender.
    pub async fn reserve_owned(self) -> Result<OwnedPermit<T>, SendError<()>> {
        if self.slots().acquire_n(1).await.is_err() {
            return Err(SendError(()));
        }
        self.chan.reserve_slot(1);
        Ok(OwnedPermit { sender: Some(self) })
    }

    /// [`try_reserve`](Self::try_reserve), the permit owning the sender (given back in the
    /// error when no slot is free, or the channel is closed).
    pub fn try_reserve_owned(self) -> Result<OwnedPermit<T>, TrySendError<Self>> {
        if let Err(e) = self.try_take_slots(1) {
            return Err(e.with(self));
        }
        self.chan.reserve_slot(1);
        Ok(OwnedPermit { sender: Some(self) })
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

    /// The slots free now.
    pub fn capacity(&self) -> usize {
        self.slots().available_permits()
    }

    /// The channel's bound.
    pub fn max_capacity(&self) -> usize {
        self.chan.max_capacity()
    }

    /// Whether both send on the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

/// A slot held by [`Sender::reserve`]: `send` uses it without waiting; dropping it unused
/// gives it back.
pub struct Permit<'a, T> {
    chan: &'a Chan<T>,
    used: bool,
}

impl<T> Permit<'_, T> {
    /// Sends `value` in the reserved slot (dropped if the receiver is gone).
    pub fn send(mut self, value: T) {
        self.chan.state.write_point_as("send");
        self.used = true;
        let _ = self.chan.push(value, false);
        self.chan.reserve_slot(-1);
    }
}

impl<T> Drop for Permit<'_, T> {
    fn drop(&mut self) {
        if !self.used && sim::engine_running() {
            self.chan.state.write_point_as("drop permit");
            self.chan.reserve_slot(-1);
            self.chan.free_slot();
        }
    }
}

impl<T> fmt::Debug for Permit<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").finish_non_exhaustive()
    }
}

/// Slots held by [`Sender::reserve_many`]: each `next` is a [`Permit`] for one of them;
/// dropping it gives back those not taken.
pub struct PermitIterator<'a, T> {
    chan: &'a Chan<T>,
    n: usize,
}

impl<'a, T> Iterator for PermitIterator<'a, T> {
    type Item = Permit<'a, T>;

    fn next(&mut self) -> Option<Permit<'a, T>> {
        self.n = self.n.checked_sub(1)?;
        Some(Permit {
            chan: self.chan,
            used: false,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.n, Some(self.n))
    }
}

impl<T> ExactSizeIterator for PermitIterator<'_, T> {}

impl<T> Drop for PermitIterator<'_, T> {
    fn drop(&mut self) {
        if self.n > 0 && sim::engine_running() {
            self.chan.state.write_point_as("drop permits");
            self.chan.reserve_slot(-(self.n as isize));
            self.chan.free_slots(self.n);
        }
    }
}

impl<T> fmt::Debug for PermitIterator<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermitIterator")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

/// A slot held by [`Sender::reserve_owned`], owning its sender.
pub struct OwnedPermit<T> {
    sender: Option<Sender<T>>,
}

impl<T> OwnedPermit<T> {
    /// Sends `value` in the reserved slot and hands the sender back.
    pub fn send(mut self, value: T) -> Sender<T> {
        // The point before the permit gives up its sender: killed there, it still frees its slot.
        if let Some(sender) = &self.sender {
            sender.chan.state.write_point_as("send");
        }
        let sender = self.sender.take().expect("an unused permit");
        let _ = sender.chan.push(value, false);
        sender.chan.reserve_slot(-1);
        sender
    }

    /// Gives the slot back unused, and the sender.
    pub fn release(mut self) -> Sender<T> {
        if let Some(sender) = &self.sender {
            sender.chan.state.write_point_as("release permit");
        }
        let sender = self.sender.take().expect("an unused permit");
        sender.chan.reserve_slot(-1);
        sender.chan.free_slot();
        sender
    }
}

impl<T> Drop for OwnedPermit<T> {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            if sim::engine_running() {
                sender.chan.state.write_point_as("drop permit");
                sender.chan.reserve_slot(-1);
                sender.chan.free_slot();
            }
        }
    }
}

/// The receiving half.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Receiver<T> {
    /// Waits for the next message: `None` once every sender is gone (or the channel was
    /// closed) and nothing is queued. Receiving frees a slot for a waiting sender.
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

    /// Closes the channel: sends fail from now on, waiting ones included; what is queued (and
    /// what reserved slots still send) can be received.
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

    /// The slots free now.
    pub fn capacity(&self) -> usize {
        self.chan
            .slots
            .as_ref()
            .expect("a bounded channel has slots")
            .available_permits()
    }

    /// The channel's bound.
    pub fn max_capacity(&self) -> usize {
        self.chan.max_capacity()
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.drop_receiver();
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}
