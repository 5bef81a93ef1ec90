//! The client's offline/backlog queue, kept as the real one is: entries under the queue's
//! mutex, and atomics beside it that routers read without the lock.

use std::collections::VecDeque;

use sim::sync::{Atomic, Mutex, Shared};

use super::message::Msg;
use super::variant::Behind;

pub struct ClientQueue {
    entries: Mutex<VecDeque<Msg>>,
    /// Stored under the mutex after each change.
    count: Atomic<usize>,
    /// Set while drain_backlog moves entries to the wire.
    draining: Atomic<bool>,
    /// Routers between a full lane and the push to this queue.
    handoffs: Atomic<usize>,
    /// The connection generation waiting for bind(); 0 once bound.
    awaiting_bind: Atomic<u64>,
    behind: Behind,
    /// Ghost: the number of entries, readable while a task holds the mutex across an await.
    ghost_len: Shared<usize>,
}

impl ClientQueue {
    pub fn new(behind: Behind) -> Self {
        ClientQueue {
            entries: Mutex::new("queue.entries", VecDeque::new()),
            count: Atomic::new("queue.count", 0),
            draining: Atomic::new("queue.draining", false),
            handoffs: Atomic::new("queue.handoffs", 0),
            awaiting_bind: Atomic::new("queue.awaiting_bind", 0),
            behind,
            ghost_len: Shared::new("queue.ghost_len", 0),
        }
    }

    pub async fn push_back(&self, msg: Msg) {
        let mut entries = self.entries.lock().await;
        entries.push_back(msg);
        self.ghost_len.with_mut(|n| *n = entries.len());
        self.count.store(entries.len()).await;
    }

    /// Puts re-queued in-flight messages at the front, in their original order.
    pub async fn requeue_front(&self, msgs: &[Msg]) {
        let mut entries = self.entries.lock().await;
        for msg in msgs.iter().rev() {
            entries.push_front(*msg);
        }
        self.ghost_len.with_mut(|n| *n = entries.len());
        self.count.store(entries.len()).await;
    }

    pub async fn pop_front(&self) -> Option<Msg> {
        let mut entries = self.entries.lock().await;
        let msg = entries.pop_front();
        self.ghost_len.with_mut(|n| *n = entries.len());
        self.count.store(entries.len()).await;
        msg
    }

    /// pop_front, unless `lane_busy()` says the lane holds a message: checked under the mutex,
    /// in the pop's critical section, so every entry a router queued after sending on the lane
    /// finds that lane message still there (only the handler takes from the lane).
    pub async fn pop_front_unless(&self, lane_busy: impl FnOnce() -> bool) -> Option<Msg> {
        let mut entries = self.entries.lock().await;
        if lane_busy() {
            return None;
        }
        let msg = entries.pop_front();
        self.ghost_len.with_mut(|n| *n = entries.len());
        self.count.store(entries.len()).await;
        msg
    }

    pub async fn count(&self) -> usize {
        self.count.load().await
    }

    pub async fn set_draining(&self, draining: bool) {
        self.draining.store(draining).await;
    }

    /// Whether a router must queue rather than use the lane: four separate loads, no lock.
    pub async fn behind(&self) -> bool {
        match self.behind {
            Behind::CountOnly => self.count.load().await > 0,
            Behind::CountFirst => {
                self.count.load().await > 0
                    || self.draining.load().await
                    || self.handoffs.load().await > 0
                    || self.awaiting_bind.load().await != 0
            }
            Behind::BindFirst => {
                self.awaiting_bind.load().await != 0
                    || self.count.load().await > 0
                    || self.draining.load().await
                    || self.handoffs.load().await > 0
            }
        }
    }

    /// A router whose lane was full hands the message to the queue.
    pub async fn hand_off(&self, msg: Msg) {
        self.handoffs.fetch_add(1).await;
        self.push_back(msg).await;
        self.handoffs.fetch_sub(1).await;
    }

    /// Before the session is registered: routers treat the client as behind until bound.
    pub async fn expect_bind(&self, generation: u64) {
        self.awaiting_bind.store(generation).await;
    }

    /// After the requeue: the client is bound if nobody reconnected meanwhile.
    pub async fn mark_bound(&self, generation: u64) -> bool {
        self.awaiting_bind
            .compare_exchange(generation, 0)
            .await
            .is_ok()
    }

    /// Ghost read for the model's own bookkeeping (is there work left?), never a scheduling point.
    pub fn has_entries(&self) -> bool {
        self.ghost_len.with(|n| *n > 0)
    }
}
