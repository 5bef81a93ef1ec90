//! The writer: takes frames off the bounded outbound queue and puts them on the wire.

use std::rc::Rc;

use sim::sync::Receiver;

use super::connection::Shared;
use super::frame::{Frame, RelayEvent};

pub async fn writer(shared: Rc<Shared>, out: Receiver<Frame>) {
    loop {
        let frame = out.recv_idle().await;
        if !shared.state.is_closed() {
            shared.emit(RelayEvent::Wire(frame));
        }
    }
}
