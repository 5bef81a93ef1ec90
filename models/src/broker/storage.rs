//! The broker's session storage: persisted outbound in-flight messages. Each call stands for a
//! database round trip, so it is an await point.

use std::cell::RefCell;

use sim::yield_point;

use super::message::Msg;

pub struct Storage {
    inflight: RefCell<Vec<Msg>>,
}

impl Storage {
    pub fn new(inflight: Vec<Msg>) -> Self {
        Storage {
            inflight: RefCell::new(inflight),
        }
    }

    pub async fn load_persisted_inflight(&self) -> Vec<Msg> {
        yield_point("storage.load_persisted_inflight").await;
        self.inflight.borrow().clone()
    }

    pub async fn remove_inflight(&self, packet_id: u16) {
        yield_point("storage.remove_inflight").await;
        self.inflight
            .borrow_mut()
            .retain(|m| m.packet_id != Some(packet_id));
    }
}
