//! Access-revocation eviction: a member loses access to a channel, and every subscription
//! registered on it is evicted with CLOSED — except a holder whose id a newer same-ID request,
//! still pending, already owns: that holder is retired silently and the newer request still
//! claims.

use std::rc::Rc;

use sim::yield_point;

use super::connection::Shared;
use super::frame::{Channel, Frame, FrameKind};

pub async fn revoke(shared: Rc<Shared>, channel: Channel) {
    yield_point("access revoked").await;
    let victims = shared.state.recipients(channel);
    for (sub, req) in victims {
        let _lifecycle = shared.lifecycle.lock().await;
        if shared.state.is_closed() {
            return;
        }
        let Some(holder) = shared.state.holder(sub).filter(|h| h.req == req) else {
            continue;
        };
        shared.cancel(&holder);
        shared.unregister(&holder).await;
        if let Some(entry) = shared.state.subs.borrow_mut().get_mut(sub) {
            entry.holder = None;
        }
        let replaced = shared.state.owner(sub) != Some(req);
        if replaced && shared.guards.eviction_replaced_holder_check {
            continue;
        }
        shared.retire_lineage(sub).await;
        shared
            .send(Frame {
                sub,
                kind: FrameKind::Closed("restricted: access revoked"),
                from: req,
            })
            .await;
    }
}
