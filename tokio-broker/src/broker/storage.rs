//! Session storage: the outbound QoS1 messages in flight to the client (sent, not yet
//! acknowledged), persisted so a restarted broker re-sends them. Every call is a database
//! round trip, so an await point.

use super::{round_trip, BrokerMutex as Mutex, Msg};
use std::future::Future;

/// What the client handler needs from the broker's storage.
pub trait SessionStore: Send + Sync + 'static {
    /// The messages persisted in flight for the client, in the order they were first sent.
    fn load_persisted_inflight(&self) -> impl Future<Output = Vec<Msg>> + Send;
    /// Persists a message as in flight (before it goes on the wire).
    fn persist_inflight(&self, msg: Msg) -> impl Future<Output = ()> + Send;
    /// Forgets a message once the client has acknowledged it (or bind has re-queued it).
    fn remove_inflight(&self, packet_id: u16) -> impl Future<Output = ()> + Send;
}

/// Storage in memory, each call one round trip (a yield) long.
#[derive(Default)]
pub struct MemStore {
    inflight: Mutex<Vec<Msg>>,
}

impl MemStore {
    /// A store holding these messages in flight (as a broker restarted with them on disk).
    pub fn with_inflight(inflight: Vec<Msg>) -> Self {
        MemStore {
            inflight: Mutex::new(inflight),
        }
    }
}

impl SessionStore for MemStore {
    async fn load_persisted_inflight(&self) -> Vec<Msg> {
        round_trip("storage: load in flight").await;
        self.inflight.lock().unwrap().clone()
    }

    async fn persist_inflight(&self, msg: Msg) {
        round_trip("storage: persist in flight").await;
        self.inflight.lock().unwrap().push(msg);
    }

    async fn remove_inflight(&self, packet_id: u16) {
        round_trip("storage: remove in flight").await;
        self.inflight
            .lock()
            .unwrap()
            .retain(|m| m.packet_id != Some(packet_id));
    }
}
