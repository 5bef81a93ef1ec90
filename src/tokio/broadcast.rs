//! `tokio::sync::broadcast`: every receiver gets every value sent after it subscribed, from a
//! ring of the last `capacity` values. A receiver that falls further behind than that has lost
//! the oldest: its next `recv` says by how many (`Lagged(k)`) and resumes at the oldest value
//! still held. As tokio's, the capacity is rounded up to a power of two, and a value is held
//! only until every receiver alive when it was sent has read it (or it is overwritten).

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;

use sim::sync::Shared;

use super::wait_list::{wake_all, WaitList};

/// What the engine tracks: how many values were ever sent, who is still there, who waits.
struct Meta {
    /// The position the next value gets.
    tail: u64,
    senders: usize,
    receivers: usize,
    /// How many live receivers read next at each position: the values before the lowest are
    /// read by all and go.
    positions: BTreeMap<u64, usize>,
    waiters: WaitList,
    /// Senders awaiting `closed` (the last receiver's drop).
    closed_waiters: WaitList,
}

impl Hash for Meta {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.tail.hash(state);
        self.senders.hash(state);
        self.receivers.hash(state);
        self.positions.hash(state);
        self.waiters.len().hash(state);
        self.closed_waiters.len().hash(state);
    }
}

impl Meta {
    /// A receiver now reads next at `to` (from `from`, if it was one already).
    fn reposition(&mut self, from: Option<u64>, to: Option<u64>) {
        if let Some(from) = from {
            if let Some(n) = self.positions.get_mut(&from) {
                *n -= 1;
                if *n == 0 {
                    self.positions.remove(&from);
                }
            }
        }
        if let Some(to) = to {
            *self.positions.entry(to).or_insert(0) += 1;
        }
    }

    /// The lowest position a live receiver still has to read (`tail` when none).
    fn lowest(&self) -> u64 {
        self.positions.keys().next().copied().unwrap_or(self.tail)
    }
}

/// The buffer sits in a `std::sync::Mutex` (never contended: one thread runs a simulation, and
/// it is held for one statement), so the halves are `Send + Sync` when `T: Send`, as tokio's.
struct Chan<T> {
    meta: Shared<Meta>,
    /// The last `capacity` values: `buffer[0]` is at position `tail - buffer.len()`.
    buffer: Mutex<VecDeque<T>>,
    capacity: usize,
}

/// What a receiver's attempt found (decided under the state's borrow; a value is cloned
/// after it, since cloning is user code).
enum Found {
    Value(usize),
    Lagged(u64),
    Closed,
    Empty,
}

impl<T> Chan<T> {
    fn buffer(&self) -> MutexGuard<'_, VecDeque<T>> {
        self.buffer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The attempt of a receiver at `next`: its value's index in the buffer, its lag, the end,
    /// or nothing yet (its waker registered under `ticket` if given).
    fn look(&self, next: &mut u64, wait: Option<(&mut Option<u64>, &std::task::Waker)>) -> Found {
        let held = self.buffer().len() as u64;
        let mut stale = None;
        let found = self.meta.with_mut(|m| {
            let head = m.tail - held;
            if *next < head {
                let lag = head - *next;
                m.reposition(Some(*next), Some(head));
                *next = head;
                Found::Lagged(lag)
            } else if *next < m.tail {
                let at = (*next - head) as usize;
                m.reposition(Some(*next), Some(*next + 1));
                *next += 1;
                Found::Value(at)
            } else if m.senders == 0 {
                Found::Closed
            } else {
                if let Some((ticket, waker)) = wait {
                    stale = m.waiters.register(ticket, waker);
                }
                Found::Empty
            }
        });
        // Outside the state's borrow: a waker's drop may reach this channel again.
        drop(stale);
        found
    }

    /// Lets go of the values every live receiver has read (dropped outside every lock: a
    /// value's drop is user code).
    fn release_read(&self) {
        let lowest = self.meta.with(Meta::lowest);
        let tail = self.meta.with(|m| m.tail);
        let released: Vec<T> = {
            let mut buffer = self.buffer();
            let head = tail - buffer.len() as u64;
            let n = lowest.saturating_sub(head).min(buffer.len() as u64) as usize;
            buffer.drain(..n).collect()
        };
        drop(released);
    }
}

/// A broadcast channel keeping the last `capacity` values (rounded up to a power of two), and
/// its first receiver (named `broadcast#1`, ... in traces).
///
/// # Panics
/// When `capacity` is 0.
///
/// ```
/// use braid::tokio::sync::broadcast::{self, error::RecvError};
///
/// braid::check(|| async {
///     let (tx, mut rx) = broadcast::channel(2);
///     for v in [10, 20, 30] {
///         tx.send(v).unwrap();
///     }
///     // 10 was overwritten before `rx` read it.
///     assert_eq!(rx.recv().await, Err(RecvError::Lagged(1)));
///     assert_eq!(rx.recv().await, Ok(20));
///     assert_eq!(rx.recv().await, Ok(30));
/// })
/// .assert_holds();
/// ```
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let chan = Chan::new(capacity, 1);
    (Sender { chan: chan.clone() }, Receiver { chan, next: 0 })
}

impl<T> Chan<T> {
    /// A channel of `capacity` (rounded up to a power of two), one sender and `receivers`
    /// receivers reading from the start.
    fn new(capacity: usize, receivers: usize) -> Arc<Chan<T>> {
        assert!(capacity > 0, "broadcast channel capacity cannot be zero");
        assert!(
            capacity <= usize::MAX >> 1,
            "broadcast channel capacity exceeded `usize::MAX / 2`"
        );
        let capacity = capacity.next_power_of_two();
        let positions = match receivers {
            0 => BTreeMap::new(),
            n => BTreeMap::from([(0, n)]),
        };
        Arc::new(Chan {
            meta: Shared::new(
                sim::sync::auto_name("broadcast"),
                Meta {
                    tail: 0,
                    senders: 1,
                    receivers,
                    positions,
                    waiters: WaitList::default(),
                    closed_waiters: WaitList::default(),
                },
            ),
            buffer: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
        })
    }
}

/// The sending half (clone it for more senders).
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Sender<T> {
    /// A channel of `capacity` with no receiver yet (`subscribe` makes them).
    ///
    /// # Panics
    /// When `capacity` is 0.
    pub fn new(capacity: usize) -> Self {
        Sender {
            chan: Chan::new(capacity, 0),
        }
    }

    /// Waits until there is no receiver (the last one dropped, or none subscribed yet).
    pub async fn closed(&self) {
        let mut wait = Wait {
            chan: &self.chan,
            ticket: None,
            list: |m| &mut m.closed_waiters,
            drop_op: "drop closed",
        };
        self.chan.meta.read_point_as("closed");
        std::future::poll_fn(|cx| {
            let mut stale = None;
            let closed = wait.chan.meta.with_mut(|m| {
                if m.receivers == 0 {
                    return true;
                }
                stale = m.closed_waiters.register(&mut wait.ticket, cx.waker());
                false
            });
            drop(stale);
            if closed {
                wait.ticket = None;
                return Poll::Ready(());
            }
            wait.chan.meta.waiting("closed", "a receiver is alive");
            Poll::Pending
        })
        .await
    }

    /// Sends `value` to every receiver; returns how many there are, or gives the value back
    /// when there is none (then it is not kept for later subscribers).
    pub fn send(&self, value: T) -> Result<usize, error::SendError<T>> {
        self.chan.meta.write_point_as("send");
        let receivers = self.chan.meta.with(|m| m.receivers);
        if receivers == 0 {
            return Err(error::SendError(value));
        }
        let overwritten = {
            let mut buffer = self.chan.buffer();
            buffer.push_back(value);
            match buffer.len() > self.chan.capacity {
                true => buffer.pop_front(),
                false => None,
            }
        };
        let woken = self.chan.meta.with_mut(|m| {
            m.tail += 1;
            m.waiters.take_all()
        });
        drop(overwritten);
        wake_all(woken);
        Ok(receivers)
    }

    /// A new receiver, which gets the values sent from now on.
    pub fn subscribe(&self) -> Receiver<T> {
        self.chan.meta.write_point_as("subscribe");
        let next = self.chan.meta.with_mut(|m| {
            m.receivers += 1;
            m.reposition(None, Some(m.tail));
            m.tail
        });
        Receiver {
            chan: self.chan.clone(),
            next,
        }
    }

    /// How many receivers there are.
    pub fn receiver_count(&self) -> usize {
        self.chan.meta.read_point_as("receiver_count");
        self.chan.meta.with(|m| m.receivers)
    }

    /// How many values are held (the most any receiver has yet to read, up to the capacity).
    pub fn len(&self) -> usize {
        self.chan.meta.read_point_as("len");
        self.chan.meta.with(|_| self.chan.buffer().len())
    }

    /// Whether no value is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        // The last sender's drop closes the channel: another task may look first.
        self.chan.meta.write_point_as("drop sender");
        let woken = self.chan.meta.with_mut(|m| {
            m.senders -= 1;
            match m.senders {
                0 => m.waiters.take_all(),
                _ => Vec::new(),
            }
        });
        wake_all(woken);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("broadcast::Sender").finish_non_exhaustive()
    }
}

/// A receiving half: gets every value sent since it subscribed, unless it lags.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
    next: u64,
}

/// A `recv` (or a sender's `closed`) waiting: its waker leaves its list when it is dropped.
struct Wait<'a, T> {
    chan: &'a Chan<T>,
    ticket: Option<u64>,
    /// The list: a receiver's `waiters`, or a sender's `closed_waiters`.
    list: fn(&mut Meta) -> &mut WaitList,
    /// Its drop's name in traces.
    drop_op: &'static str,
}

impl<T> Drop for Wait<'_, T> {
    fn drop(&mut self) {
        if self.ticket.is_some() && sim::engine_running() {
            let ticket = self.ticket;
            self.chan.meta.write_point_as(self.drop_op);
            let list = self.list;
            let stale = self.chan.meta.with_mut(|m| list(m).remove(ticket));
            drop(stale);
        }
    }
}

impl<T: Clone> Receiver<T> {
    /// Waits for the next value: `Lagged(k)` if `k` values were overwritten before this
    /// receiver read them (the next call returns the oldest still held), `Closed` once every
    /// sender is gone and every held value was read.
    pub async fn recv(&mut self) -> Result<T, error::RecvError> {
        self.chan.meta.write_point_as("recv");
        let mut wait = Wait {
            chan: &self.chan,
            ticket: None,
            list: |m| &mut m.waiters,
            drop_op: "drop recv",
        };
        let next = &mut self.next;
        std::future::poll_fn(|cx| {
            // As tokio's: only a value spends budget (a lag or the end gives it back).
            let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
            let found = wait.chan.look(next, Some((&mut wait.ticket, cx.waker())));
            match found {
                Found::Value(at) => {
                    let value = wait.chan.buffer()[at].clone();
                    wait.chan.release_read();
                    coop.made_progress();
                    Poll::Ready(Ok(value))
                }
                Found::Lagged(k) => Poll::Ready(Err(error::RecvError::Lagged(k))),
                Found::Closed => Poll::Ready(Err(error::RecvError::Closed)),
                Found::Empty => {
                    wait.chan.meta.waiting("recv", "empty");
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// The next value if there is one now.
    pub fn try_recv(&mut self) -> Result<T, error::TryRecvError> {
        self.chan.meta.write_point_as("try_recv");
        match self.chan.look(&mut self.next, None) {
            Found::Value(at) => {
                let value = self.chan.buffer()[at].clone();
                self.chan.release_read();
                Ok(value)
            }
            Found::Lagged(k) => Err(error::TryRecvError::Lagged(k)),
            Found::Closed => Err(error::TryRecvError::Closed),
            Found::Empty => Err(error::TryRecvError::Empty),
        }
    }
}

impl<T> Receiver<T> {
    /// A new receiver that gets the values sent from now on.
    pub fn resubscribe(&self) -> Self {
        self.chan.meta.write_point_as("resubscribe");
        let next = self.chan.meta.with_mut(|m| {
            m.receivers += 1;
            m.reposition(None, Some(m.tail));
            m.tail
        });
        Receiver {
            chan: self.chan.clone(),
            next,
        }
    }

    /// How many values this receiver has yet to read (those still held).
    pub fn len(&self) -> usize {
        self.chan.meta.read_point_as("len");
        // Lagged values count too, as tokio's: a length past the capacity means the next
        // `recv` reports the lag.
        self.chan.meta.with(|m| (m.tail - self.next) as usize)
    }

    /// Whether this receiver has read everything held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if sim::engine_running() {
            self.chan.meta.write_point_as("drop receiver");
            let next = self.next;
            let woken = self.chan.meta.with_mut(|m| {
                m.receivers -= 1;
                m.reposition(Some(next), None);
                match m.receivers {
                    0 => m.closed_waiters.take_all(),
                    _ => Vec::new(),
                }
            });
            // What only this receiver had left to read goes with it.
            self.chan.release_read();
            wake_all(woken);
        }
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("broadcast::Receiver")
            .finish_non_exhaustive()
    }
}

/// `tokio::sync::broadcast::error`.
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

    /// Why `recv` returned no value.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    pub enum RecvError {
        /// Every sender is gone and every held value was read.
        Closed,
        /// This many values were overwritten before this receiver read them.
        Lagged(u64),
    }

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                RecvError::Closed => f.write_str("channel closed"),
                RecvError::Lagged(k) => write!(f, "channel lagged by {k}"),
            }
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` returned no value.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    pub enum TryRecvError {
        /// Nothing new yet.
        Empty,
        /// Every sender is gone and every held value was read.
        Closed,
        /// This many values were overwritten before this receiver read them.
        Lagged(u64),
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
                TryRecvError::Lagged(k) => write!(f, "channel lagged by {k}"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}
