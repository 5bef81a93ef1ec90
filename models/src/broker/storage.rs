//! The broker's session storage: persisted outbound in-flight messages. Each call stands for a
//! database round trip, so it is an await point.

use sim::sync::Shared;
use sim::yield_point;

use super::message::Msg;

pub struct Storage {
    inflight: Shared<Vec<Msg>>,
}

impl Storage {
    pub fn new(inflight: Vec<Msg>) -> Self {
        Storage {
            inflight: Shared::new("storage.inflight", inflight),
        }
    }

    pub async fn load_persisted_inflight(&self) -> Vec<Msg> {
        yield_point("storage.load_persisted_inflight").await;
        self.inflight.with(|v| v.clone())
    }

    pub async fn remove_inflight(&self, packet_id: u16) {
        yield_point("storage.remove_inflight").await;
        self.inflight
            .with_mut(|v| v.retain(|m| m.packet_id != Some(packet_id)));
    }
}
