//! A session store that reports to c's log: the test's oracle around the broker's real store,
//! not broker code. What each bind loads is what c is owed on that connection (re-sent, DUP,
//! before anything newer); a message whose persist has returned is one the broker took
//! responsibility for (it goes on the wire next), so it must reach c, crash or not.
//!
//! Which connection a load is for: the front end's generations count up from the same first
//! generation, and each connection's handler binds (loads once) after the previous one has
//! ended, so the n-th load is generation `first + n - 1`'s.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use super::{ClientLog, Msg, SessionStore};

pub struct ObservedStore<S> {
    inner: S,
    log: Arc<Mutex<ClientLog>>,
    /// The generation the next load binds (a counter, not a scheduling point: it is the
    /// oracle's).
    next_generation: AtomicU64,
}

impl<S: SessionStore> ObservedStore<S> {
    /// Observes `inner` for a front end whose first generation is `first_generation`.
    pub fn new(inner: S, log: Arc<Mutex<ClientLog>>, first_generation: u64) -> Self {
        ObservedStore {
            inner,
            log,
            next_generation: AtomicU64::new(first_generation),
        }
    }
}

impl<S: SessionStore> SessionStore for ObservedStore<S> {
    async fn load_persisted_inflight(&self) -> Vec<Msg> {
        let inflight = self.inner.load_persisted_inflight().await;
        let generation = self.next_generation.fetch_add(1, Relaxed);
        self.log.lock().unwrap().bound(generation, &inflight);
        inflight
    }

    async fn persist_inflight(&self, msg: Msg) {
        self.inner.persist_inflight(msg).await;
        self.log.lock().unwrap().took(&[msg]);
    }

    async fn remove_inflight(&self, packet_id: u16) {
        self.inner.remove_inflight(packet_id).await;
    }
}
