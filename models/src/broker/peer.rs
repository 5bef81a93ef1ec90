//! Client c on the other end of the wire: takes each PUBLISH and acknowledges it.

use std::rc::Rc;

use sim::sync::{Receiver, Sender};

use super::message::{BrokerEvent, Msg};
use super::Shared;

pub struct ClientPeer {
    pub shared: Rc<Shared>,
    pub wire: Receiver<Msg>,
    pub acks: Sender<u16>,
}

impl ClientPeer {
    pub async fn run(self) {
        loop {
            sim::checkpoint("peer", &());
            let msg = self.wire.recv_idle().await;
            let packet_id = msg
                .packet_id
                .expect("a PUBLISH on the wire has a packet id");
            self.acks.send(packet_id).await;
            self.shared.history.emit(BrokerEvent::Acked { packet_id });
            self.shared.wake.notify_one().await;
        }
    }
}
