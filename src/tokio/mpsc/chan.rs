//! The state both mpsc flavours share: the queue, who is still there, and the receiver's
//! waker. A bounded channel adds a semaphore of free slots: a send takes a slot, a receive
//! gives one back (as tokio's does), so back-pressure and FIFO fairness among blocked senders
//! come from the semaphore.
//!
//! The state is four engine objects, so that the reduction sees which steps truly depend on
//! each other: the queue and the receiver's side (`Core`), the number of senders, whether
//! every sender is gone, and the receiver's waker. A clone or a drop of a sender that is not
//! the last one touches only the count, which no send or receive reads; the last one's drop
//! also marks the senders gone, which a receive reads only when it finds the queue empty, and
//! wakes the receiver if it waits. Taking the waker reads its slot when it is empty (nothing
//! changes), so a send and the last drop commute with each other and with a receive that is
//! not waiting. The scheduling points are tokio's, each where it was: only what each step
//! accesses is finer.

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
    /// Slots reserved by a `Permit` and not yet used: a closed channel is not drained until
    /// they are.
    reserved: usize,
    /// Senders waiting in `closed()`.
    closed_waiters: WaitList,
}

/// The engine hashes a summary: how many messages wait (not their values, which need not be
/// `Hash`), whether the receiver is there, and what is reserved.
impl<T> Hash for Core<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.queue.len().hash(state);
        self.rx_closed.hash(state);
        self.reserved.hash(state);
    }
}

impl<T> Core<T> {
    /// Whether nothing more can ever arrive once nobody can send (`rx_closed`, or every sender
    /// gone): nothing queued, and no slot in use (`idle`: a bounded channel's slots all free,
    /// as tokio's semaphore is idle; a slot handed to a waiting `reserve()` that has not run
    /// yet is in use).
    fn drained(&self, idle: bool) -> bool {
        self.queue.is_empty() && self.reserved == 0 && idle
    }
}

/// The receiver's waker, in an object of its own: the engine hashes nothing of it (a waker is
/// not state).
struct RxWaker(Option<Waker>);

impl Hash for RxWaker {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// What a receive sees of an empty channel: whether no slot is reserved, and whether the
/// receiver closed it.
struct Empty {
    unreserved: bool,
    rx_closed: bool,
}

/// One channel: its state, its senders, and its free slots when it is bounded.
pub(super) struct Chan<T> {
    pub(super) state: Shared<Core<T>>,
    /// How many senders: only their clones and drops touch it.
    senders: Shared<usize>,
    /// Every sender is gone: set once, by the last one's drop; read by a receive that finds
    /// the queue empty.
    senders_gone: Shared<bool>,
    /// The receiver's waker, while it waits for a message.
    rx_waker: Shared<RxWaker>,
    pub(super) slots: Option<Semaphore>,
    capacity: usize,
}

impl<T> Chan<T> {
    /// A channel with one sender; bounded to `capacity` messages if given.
    pub(super) fn new(capacity: Option<usize>) -> Self {
        let [name, senders, senders_gone, rx_waker] = sim::sync::auto_names(
            "channel",
            ["", " senders", " senders gone", " receiver waker"],
        );
        Chan {
            senders: Shared::new(senders, 1),
            senders_gone: Shared::new(senders_gone, false),
            rx_waker: Shared::new(rx_waker, RxWaker(None)),
            state: Shared::new(
                name,
                Core {
                    queue: VecDeque::new(),
                    rx_closed: false,
                    rx_dropped: false,
                    reserved: 0,
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
        self.state.with_mut(|c| {
            if c.rx_dropped || (refuse_closed && c.rx_closed) {
                return Err(value);
            }
            c.queue.push_back(value);
            Ok(())
        })?;
        self.wake_receiver();
        Ok(())
    }

    /// Wakes the receiver if it waits: a read of its waker's slot when it does not (nothing
    /// changes), a write when it does.
    fn wake_receiver(&self) {
        if self.rx_waker.with(|w| w.0.is_none()) {
            return;
        }
        if let Some(w) = self.rx_waker.with_mut(|w| w.0.take()) {
            w.wake();
        }
    }

    /// Whether nobody can send any more: the receiver closed the channel (`rx_closed`, read
    /// from the state already), or every sender is gone (read only when not).
    fn nobody_sends(&self, rx_closed: bool) -> bool {
        rx_closed || self.senders_gone.with(|g| *g)
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
        let (drained, rx_closed) = self.state.with_mut(|c| {
            c.reserved = c
                .reserved
                .checked_add_signed(delta)
                .expect("reserved slots");
            (c.drained(idle), c.rx_closed)
        });
        // The last reservation given up may leave a closed channel drained.
        if drained && self.nobody_sends(rx_closed) {
            self.wake_receiver();
        }
    }

    /// Gives a slot back (a message received, or a reservation dropped).
    pub(super) fn free_slot(&self) {
        self.free_slots(1);
    }

    /// Gives `n` slots back at once (the permits a `reserve_many` left unused).
    pub(super) fn free_slots(&self, n: usize) {
        if let Some(slots) = &self.slots {
            slots.release(n);
        }
    }

    /// Waits for the next message, for a receiver's `recv` called at `at`: a scheduling
    /// point, then its attempts.
    pub(super) async fn recv(&self, at: &'static Location<'static>) -> Option<T> {
        std::future::poll_fn(|_| self.state.poll_write_point_at("recv", Some(at))).await;
        std::future::poll_fn(|cx| self.poll_recv(cx, Some(at))).await
    }

    /// The receiver's attempt, for a unit of budget: a message, the end, or its waker stored.
    pub(super) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        at: Option<&'static Location<'static>>,
    ) -> Poll<Option<T>> {
        let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
        let got = self.attempt(cx, at);
        if let Poll::Ready(Some(_)) = got {
            self.free_slot();
        }
        coop.settle(got)
    }

    /// Waits for messages, for a receiver's `recv_many` called at `at`: a scheduling point,
    /// then its attempts.
    pub(super) async fn recv_many(
        &self,
        buffer: &mut Vec<T>,
        limit: usize,
        at: &'static Location<'static>,
    ) -> usize {
        std::future::poll_fn(|_| self.state.poll_write_point_at("recv_many", Some(at))).await;
        std::future::poll_fn(|cx| self.poll_recv_many(cx, buffer, limit, Some(at))).await
    }

    /// `recv_many`'s attempt, for one unit of budget (tokio's): up to `limit` of the messages
    /// queued now, appended to `buffer` (how many: 0 once the channel has ended, or for a limit
    /// of 0), or its waker stored while none is.
    pub(super) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
        at: Option<&'static Location<'static>>,
    ) -> Poll<usize> {
        let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
        if limit == 0 {
            coop.made_progress();
            return Poll::Ready(0);
        }
        let first = std::task::ready!(self.attempt(cx, at));
        coop.made_progress();
        let Some(first) = first else {
            return Poll::Ready(0);
        };
        buffer.push(first);
        let mut received = 1;
        while received < limit {
            let Ok(v) = self.pop() else { break };
            buffer.push(v);
            received += 1;
        }
        // Their slots come back at once, as tokio's (one release, not one per message).
        self.free_slots(received);
        Poll::Ready(received)
    }

    /// A receive's attempt: a message (its slot still to be given back), the end, or its
    /// waker stored.
    fn attempt(
        &self,
        cx: &mut Context<'_>,
        at: Option<&'static Location<'static>>,
    ) -> Poll<Option<T>> {
        let idle = self.idle();
        let empty = match self.pop() {
            Ok(v) => return Poll::Ready(Some(v)),
            Err(empty) => empty,
        };
        let closed = self.nobody_sends(empty.rx_closed);
        if closed && empty.unreserved && idle {
            return Poll::Ready(None);
        }
        let stale = self.rx_waker.with_mut(|w| w.0.replace(cx.waker().clone()));
        self.state.waiting_at("recv", "empty", at);
        if closed {
            if let Some(slots) = &self.slots {
                // Closed, its slots still in use: one coming back may leave it drained.
                slots.notify_release(cx.waker(), self.capacity);
            }
        }
        // Outside the state's borrow: a waker's drop may reach this channel again.
        drop(stale);
        Poll::Pending
    }

    /// The next message, or, when none is queued (a read of the state, which changes
    /// nothing), what the receiver sees of an empty channel.
    fn pop(&self) -> Result<T, Empty> {
        let empty = self.state.with(|c| {
            c.queue.is_empty().then_some(Empty {
                unreserved: c.reserved == 0,
                rx_closed: c.rx_closed,
            })
        });
        match empty {
            Some(empty) => Err(empty),
            None => Ok(self
                .state
                .with_mut(|c| c.queue.pop_front().expect("a message is queued"))),
        }
    }

    /// `try_recv` after its scheduling point.
    pub(super) fn try_recv(&self) -> Result<T, TryRecvError> {
        let idle = self.idle();
        match self.pop() {
            Ok(v) => {
                self.free_slot();
                Ok(v)
            }
            Err(empty) if empty.unreserved && idle && self.nobody_sends(empty.rx_closed) => {
                Err(TryRecvError::Disconnected)
            }
            Err(_) => Err(TryRecvError::Empty),
        }
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
        let queued = self.state.with_mut(|c| {
            c.rx_dropped = true;
            std::mem::take(&mut c.queue)
        });
        // The receiver's waker goes with it (it would keep its task alive).
        let waker = match self.rx_waker.with(|w| w.0.is_some()) {
            true => self.rx_waker.with_mut(|w| w.0.take()),
            false => None,
        };
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

    /// One more sender (the count only: nothing a receive or a send reads).
    pub(super) fn add_sender(&self) {
        self.senders.write_point_as("clone sender");
        self.senders.with_mut(|n| *n += 1);
    }

    /// One sender fewer: the last one's drop lets the receiver see the end.
    pub(super) fn drop_sender(&self) {
        if !sim::engine_running() {
            return;
        }
        // The last sender's drop ends the channel for the receiver: another task may look
        // first, or send first. Any other drop changes only the count (which it reads, to know
        // it is not the last: two drops do not commute).
        self.senders.write_point_as("drop sender");
        let last = self.senders.with_mut(|n| {
            *n -= 1;
            *n == 0
        });
        if last {
            self.senders_gone.with_mut(|g| *g = true);
            self.wake_receiver();
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
        let rx_closed = self.state.with(|c| c.rx_closed);
        self.nobody_sends(rx_closed)
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
