//! The state both mpsc flavours share: the queue, who is still there, and the receiver's
//! waker. A bounded channel adds a semaphore of free slots: a send takes a slot, a receive
//! gives one back (as tokio's does), so back-pressure and FIFO fairness among blocked senders
//! come from the semaphore.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::task::{Context, Poll, Waker};

use sim::sync::Shared;

use super::super::semaphore::Semaphore;
use super::super::wait_list::{wake_all, WaitList};
use super::error::TryRecvError;

pub(super) struct Core<T> {
    queue: VecDeque<T>,
    /// The receiver closed the channel or is gone.
    rx_closed: bool,
    /// The receiver is gone: nothing queued now would ever be received.
    rx_dropped: bool,
    senders: usize,
    /// Slots reserved by a `Permit` and not yet used: a closed channel is not drained until
    /// they are.
    reserved: usize,
    rx_waker: Option<Waker>,
    /// Senders waiting in `closed()`.
    closed_waiters: WaitList,
}

/// The engine hashes a summary: how many messages wait (not their values, which need not be
/// `Hash`), who is still there, and what is reserved.
impl<T> Hash for Core<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.queue.len().hash(state);
        self.rx_closed.hash(state);
        self.senders.hash(state);
        self.reserved.hash(state);
    }
}

impl<T> Core<T> {
    /// Whether nothing more can ever arrive: nobody can send, and no slot is in use (`idle`:
    /// a bounded channel's slots all free, as tokio's semaphore is idle; a slot handed to a
    /// waiting `reserve()` that has not run yet is in use).
    fn disconnected(&self, idle: bool) -> bool {
        self.queue.is_empty() && (self.senders == 0 || self.rx_closed) && self.reserved == 0 && idle
    }
}

/// One channel: its state, and its free slots when it is bounded.
pub(super) struct Chan<T> {
    pub(super) state: Shared<Core<T>>,
    pub(super) slots: Option<Semaphore>,
    capacity: usize,
}

impl<T> Chan<T> {
    /// A channel with one sender; bounded to `capacity` messages if given.
    pub(super) fn new(capacity: Option<usize>) -> Self {
        Chan {
            state: Shared::new(
                sim::sync::auto_name("channel"),
                Core {
                    queue: VecDeque::new(),
                    rx_closed: false,
                    rx_dropped: false,
                    senders: 1,
                    reserved: 0,
                    rx_waker: None,
                    closed_waiters: WaitList::default(),
                },
            ),
            slots: capacity.map(|n| Semaphore::of_kind("channel-slots", n)),
            capacity: capacity.unwrap_or(usize::MAX),
        }
    }

    /// The bound (`usize::MAX` when unbounded).
    pub(super) fn max_capacity(&self) -> usize {
        self.capacity
    }

    /// Queues a message and wakes the receiver (no scheduling point: the caller has had it); gives it back if the receiver is gone or, when
    /// `refuse_closed`, has closed the channel. (A bounded send's slot, taken beforehand,
    /// proves the channel was open; a reserved slot may be used after `close`, as tokio's.)
    pub(super) fn push(&self, value: T, refuse_closed: bool) -> Result<(), T> {
        let waker = self.state.with_mut(|c| {
            if c.rx_dropped || (refuse_closed && c.rx_closed) {
                return Err(value);
            }
            c.queue.push_back(value);
            Ok(c.rx_waker.take())
        })?;
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Whether every slot is free (always, unbounded).
    fn idle(&self) -> bool {
        self.slots
            .as_ref()
            .is_none_or(|s| s.free_now() == self.capacity)
    }

    /// A slot reserved (`reserved` counts it) or given up.
    pub(super) fn reserve_slot(&self, delta: isize) {
        let idle = self.idle();
        let waker = self.state.with_mut(|c| {
            c.reserved = c
                .reserved
                .checked_add_signed(delta)
                .expect("reserved slots");
            // The last reservation given up may leave a closed channel drained.
            match c.disconnected(idle) {
                true => c.rx_waker.take(),
                false => None,
            }
        });
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Gives a slot back (a message received, or a reservation dropped).
    pub(super) fn free_slot(&self) {
        if let Some(slots) = &self.slots {
            slots.release(1);
        }
    }

    /// Waits for the next message, for a receiver's `recv` called at `at`: a scheduling
    /// point, then its attempts.
    pub(super) async fn recv(&self, at: &'static Location<'static>) -> Option<T> {
        self.state.write_point_at("recv", Some(at));
        std::future::poll_fn(|cx| self.poll_recv(cx, Some(at))).await
    }

    /// The receiver's attempt: a message, the end, or its waker stored.
    pub(super) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        at: Option<&'static Location<'static>>,
    ) -> Poll<Option<T>> {
        let mut stale = None;
        let idle = self.idle();
        let mut closed = false;
        let got = self.state.with_mut(|c| match c.queue.pop_front() {
            Some(v) => Poll::Ready(Some(v)),
            None if c.disconnected(idle) => Poll::Ready(None),
            None => {
                closed = c.senders == 0 || c.rx_closed;
                stale = c.rx_waker.replace(cx.waker().clone());
                self.state.waiting_at("recv", "empty", at);
                Poll::Pending
            }
        });
        if closed {
            if let Some(slots) = &self.slots {
                // Closed, its slots still in use: one coming back may leave it drained.
                slots.notify_release(cx.waker());
            }
        }
        // Outside the state's borrow: a waker's drop may reach this channel again.
        drop(stale);
        if matches!(got, Poll::Ready(Some(_))) {
            self.free_slot();
        }
        got
    }

    /// `try_recv` after its scheduling point.
    pub(super) fn try_recv(&self) -> Result<T, TryRecvError> {
        let idle = self.idle();
        let got = self.state.with_mut(|c| match c.queue.pop_front() {
            Some(v) => Ok(v),
            None if c.disconnected(idle) => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        });
        if got.is_ok() {
            self.free_slot();
        }
        got
    }

    /// The receiver closes the channel: senders fail from now on (waiting ones too), the
    /// messages already queued can still be received.
    pub(super) fn close(&self) {
        let woken = self.state.with_mut(|c| {
            c.rx_closed = true;
            c.closed_waiters.take_all()
        });
        if let Some(slots) = &self.slots {
            slots.close();
        }
        wake_all(woken);
    }

    /// The receiver is dropped: closed, and the queued messages dropped (outside the state's
    /// borrow: a message may hold a sender of this very channel).
    pub(super) fn drop_receiver(&self) {
        if !sim::engine_running() {
            return;
        }
        self.state.write_point_as("drop receiver");
        self.close();
        let (queued, waker) = self.state.with_mut(|c| {
            c.rx_dropped = true;
            (std::mem::take(&mut c.queue), c.rx_waker.take())
        });
        // The receiver's waker goes with it (it would keep its task alive).
        drop((queued, waker));
        if let Some(slots) = &self.slots {
            slots.forget_release_waker();
        }
    }

    /// Whether the receiver closed the channel or is gone.
    pub(super) fn is_closed(&self) -> bool {
        self.state.read_point_as("is_closed");
        self.state.with(|c| c.rx_closed)
    }

    /// How many messages wait.
    pub(super) fn len(&self) -> usize {
        self.state.read_point_as("len");
        self.state.with(|c| c.queue.len())
    }

    /// One more sender.
    pub(super) fn add_sender(&self) {
        self.state.write_point_as("clone sender");
        self.state.with_mut(|c| c.senders += 1);
    }

    /// One sender fewer: the last one's drop lets the receiver see the end.
    pub(super) fn drop_sender(&self) {
        if !sim::engine_running() {
            return;
        }
        // The last sender's drop ends the channel for the receiver: another task may look
        // first, or send first.
        self.state.write_point_as("drop sender");
        let waker = self.state.with_mut(|c| {
            c.senders -= 1;
            match c.senders {
                0 => c.rx_waker.take(),
                _ => None,
            }
        });
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// `Sender::closed`'s attempt: ready once the receiver closed the channel or is gone.
    pub(super) fn poll_closed(&self, ticket: &mut Option<u64>, cx: &mut Context<'_>) -> Poll<()> {
        let mut stale = None;
        let ready = self.state.with_mut(|c| {
            if c.rx_closed {
                Poll::Ready(())
            } else {
                stale = c.closed_waiters.register(ticket, cx.waker());
                self.state.waiting("closed", "receiver open");
                Poll::Pending
            }
        });
        drop(stale);
        ready
    }

    /// A `closed()` future dropped.
    pub(super) fn forget_closed(&self, ticket: Option<u64>) {
        if ticket.is_some() && sim::engine_running() {
            let stale = self.state.with_mut(|c| c.closed_waiters.remove(ticket));
            drop(stale);
        }
    }
}

impl<T> Chan<T> {
    /// The receiver's view of closed: it closed the channel, or every sender is gone.
    pub(super) fn rx_is_closed(&self) -> bool {
        self.state.read_point_as("is_closed");
        self.state.with(|c| c.rx_closed || c.senders == 0)
    }
}

/// A sender waiting in `closed()`: its waker leaves the list when the wait is dropped.
pub(super) struct ClosedWait<'a, T> {
    pub(super) chan: &'a Chan<T>,
    pub(super) ticket: Option<u64>,
}

impl<T> ClosedWait<'_, T> {
    /// Waits until the receiver closes the channel or is gone.
    pub(super) async fn wait(mut self) {
        self.chan.state.read_point_as("closed");
        std::future::poll_fn(|cx| self.chan.poll_closed(&mut self.ticket, cx)).await
    }
}

impl<T> Drop for ClosedWait<'_, T> {
    fn drop(&mut self) {
        self.chan.forget_closed(self.ticket);
    }
}
