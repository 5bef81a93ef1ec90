//! Live fan-out of an event accepted on a channel: snapshot the recipients from the fan-out
//! index, await the access filter, queue the EVENTs.

use std::rc::Rc;

use sim::yield_point;

use super::connection::Shared;
use super::frame::{Channel, Frame, FrameKind};

pub async fn live_fanout(shared: Rc<Shared>, channel: Channel, label: &'static str) {
    let recipients = shared.state.recipients(channel);
    yield_point("access filter").await;
    for (sub, req) in recipients {
        let frame = Frame {
            sub,
            kind: FrameKind::Event(label),
            from: req,
        };
        if shared.guards.live_generation_check {
            // The subscription generation snapshotted must still be the registered one.
            let _lifecycle = shared.lifecycle.lock().await;
            let current = !shared.state.is_closed() && shared.state.registered(sub) == Some(req);
            if current {
                shared.send(frame).await;
            }
        } else {
            shared.send(frame).await;
        }
    }
}
