//! The client's offline/backlog queue, kept as the real one is: entries under the queue's
//! mutex, and atomics beside it that routers read without the lock.

use std::collections::VecDeque;

use super::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use super::rt::sync::Mutex;
use super::{Behind, Msg};

pub struct ClientQueue {
    entries: Mutex<VecDeque<Msg>>,
    /// Stored under the mutex after each change.
    count: AtomicUsize,
    /// Set while drain_backlog moves entries to the wire.
    draining: AtomicBool,
    /// Routers between a full lane and the push to this queue.
    handoffs: AtomicUsize,
    /// The connection generation waiting for bind(); 0 once bound.
    awaiting_bind: AtomicU64,
    behind: Behind,
}

impl ClientQueue {
    pub fn new(behind: Behind) -> Self {
        ClientQueue {
            entries: Mutex::new(VecDeque::new()),
            count: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            handoffs: AtomicUsize::new(0),
            awaiting_bind: AtomicU64::new(0),
            behind,
        }
    }

    pub async fn push_back(&self, msg: Msg) {
        let mut entries = self.entries.lock().await;
        entries.push_back(msg);
        self.count.store(entries.len(), SeqCst);
    }

    /// Puts re-queued in-flight messages at the front, in their original order.
    pub async fn requeue_front(&self, msgs: &[Msg]) {
        let mut entries = self.entries.lock().await;
        for msg in msgs.iter().rev() {
            entries.push_front(*msg);
        }
        self.count.store(entries.len(), SeqCst);
    }

    pub async fn pop_front(&self) -> Option<Msg> {
        let mut entries = self.entries.lock().await;
        let msg = entries.pop_front();
        self.count.store(entries.len(), SeqCst);
        msg
    }

    pub fn count(&self) -> usize {
        self.count.load(SeqCst)
    }

    pub fn set_draining(&self, draining: bool) {
        self.draining.store(draining, SeqCst);
    }

    /// Whether a router must queue rather than use the lane: separate loads, no lock.
    pub fn behind(&self) -> bool {
        match self.behind {
            Behind::CountOnly => self.count.load(SeqCst) > 0,
            Behind::CountFirst => {
                self.count.load(SeqCst) > 0
                    || self.draining.load(SeqCst)
                    || self.handoffs.load(SeqCst) > 0
                    || self.awaiting_bind.load(SeqCst) != 0
            }
            Behind::BindFirst => {
                self.awaiting_bind.load(SeqCst) != 0
                    || self.count.load(SeqCst) > 0
                    || self.draining.load(SeqCst)
                    || self.handoffs.load(SeqCst) > 0
            }
        }
    }

    /// A router whose lane was full (or whose lane permit did not come in time) hands the
    /// message to the queue.
    pub async fn hand_off(&self, msg: Msg) {
        self.handoffs.fetch_add(1, SeqCst);
        self.push_back(msg).await;
        self.handoffs.fetch_sub(1, SeqCst);
    }

    /// Before the session is registered: routers treat the client as behind until bound.
    pub fn expect_bind(&self, generation: u64) {
        self.awaiting_bind.store(generation, SeqCst);
    }

    /// After the requeue: the client is bound if nobody reconnected meanwhile.
    pub fn mark_bound(&self, generation: u64) -> bool {
        self.awaiting_bind
            .compare_exchange(generation, 0, SeqCst, SeqCst)
            .is_ok()
    }
}
