// What the thread models build from a tool's primitives, written once against the including
// `prims` module (shuttle_rt.rs or loom_rt.rs), which supplies the tool's Mutex, Condvar and
// atomics and two tool-specific functions: `pick` (a choice among alternatives) and `track`
// (make one access to plain shared state visible to the tool's reduction).
//
// Each type stands for one of braid's primitives, and each of its methods for one braid
// operation: an await point, a channel op, a Notify op, a recorded access to a `Shared` cell.

use std::collections::VecDeque;
use std::sync::atomic::Ordering::SeqCst;

/// An await of a round trip that touches no shared state (storage, database, network): a load
/// of an atomic nobody writes, a scheduling point in both tools, unlike thread::yield_now
/// (which shuttle's PCT deprioritises and loom treats as a spin).
pub struct AwaitPoint(AtomicUsize);

impl AwaitPoint {
    pub fn new() -> Self {
        AwaitPoint(AtomicUsize::new(0))
    }

    /// The task may be descheduled here.
    pub fn wait(&self) {
        self.0.load(SeqCst);
    }

    /// braid's `choose(n)`: a scheduling point, then a value in `0..n` from the tool.
    pub fn choose(&self, n: usize) -> usize {
        assert!(n > 0, "choose needs at least one alternative");
        self.wait();
        pick(n)
    }
}

/// braid's `Shared` cell: plain state shared outside any lock. Reading or changing it is not a
/// scheduling point in braid, but braid records it as a read or a write for its reduction;
/// `track` does what the tool needs for the same (nothing for shuttle, which does not reduce;
/// an atomic access for loom, whose DPOR only sees the tool's own objects).
pub struct Recorded<T> {
    order: AtomicUsize,
    value: std::sync::Mutex<T>,
}

impl<T> Recorded<T> {
    pub fn new(value: T) -> Self {
        Recorded {
            order: AtomicUsize::new(0),
            value: std::sync::Mutex::new(value),
        }
    }

    /// Reads the value.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        track(&self.order, false);
        f(&self.value.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Changes the value.
    pub fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        track(&self.order, true);
        f(&mut self.value.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A bounded queue under a mutex, with a condvar for a receiver that blocks.
pub struct Chan<T> {
    state: Mutex<ChanState<T>>,
    ready: Condvar,
    capacity: usize,
}

struct ChanState<T> {
    items: VecDeque<T>,
    /// No more sends: a blocked `recv_or_closed` returns once the queue is empty.
    closed: bool,
}

impl<T> Chan<T> {
    pub fn new(capacity: usize) -> Self {
        Chan {
            state: Mutex::new(ChanState {
                items: VecDeque::new(),
                closed: false,
            }),
            ready: Condvar::new(),
            capacity,
        }
    }

    /// Err(item) when full.
    pub fn try_send(&self, item: T) -> Result<(), T> {
        self.try_send_with(item, |_| {})
    }

    /// `try_send`, calling `on_sent` as the item enters the queue (under the queue's lock, so
    /// what it records is in queue order).
    pub fn try_send_with(&self, item: T, on_sent: impl FnOnce(&T)) -> Result<(), T> {
        let mut state = self.state.lock().unwrap();
        if state.items.len() >= self.capacity {
            return Err(item);
        }
        on_sent(&item);
        state.items.push_back(item);
        self.ready.notify_one();
        Ok(())
    }

    pub fn try_recv(&self) -> Option<T> {
        self.state.lock().unwrap().items.pop_front()
    }

    pub fn recv(&self) -> T {
        self.recv_or_closed()
            .expect("recv on a closed, empty channel")
    }

    /// Waits for an item; None once the channel is closed and empty.
    pub fn recv_or_closed(&self) -> Option<T> {
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(item) = state.items.pop_front() {
                return Some(item);
            }
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).unwrap();
        }
    }

    /// Ends the receiver's wait once the queue is drained (the harness's shutdown: braid's
    /// receivers are idle servers that a run leaves blocked).
    pub fn close(&self) {
        let mut state = self.state.lock().unwrap();
        state.closed = true;
        self.ready.notify_one();
    }

    pub fn is_empty(&self) -> bool {
        self.state.lock().unwrap().items.is_empty()
    }
}

/// tokio's Notify as the models use it: notify_one leaves a permit if nobody waits.
pub struct Wake {
    permit: Mutex<bool>,
    cv: Condvar,
}

impl Wake {
    pub fn new() -> Self {
        Wake {
            permit: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    pub fn notify_one(&self) {
        *self.permit.lock().unwrap() = true;
        self.cv.notify_one();
    }

    pub fn notified(&self) {
        let mut permit = self.permit.lock().unwrap();
        while !*permit {
            permit = self.cv.wait(permit).unwrap();
        }
        *permit = false;
    }
}
