//! close.rs of the relay: admission of a REQ in the read loop (`admit`), and the CLOSE handler.

use std::rc::Rc;

use super::connection::{Entry, Lease, Shared};
use super::frame::{Action, Channel, Frame, FrameKind, RelayEvent, SubId};

/// close::admit, in the read loop before spawn: records the request's token as the owner of its
/// id (fencing any older request for the id that is still pending) and applies the subscription
/// limit, counting pending requests. `None`: refused here with CLOSED, no handler.
pub async fn admit(
    shared: &Shared,
    req: Action,
    sub: SubId,
    channel: Channel,
) -> Option<Rc<Lease>> {
    let lifecycle = shared.lifecycle.lock().await;
    if shared.state.is_closed() {
        return None;
    }
    shared.emit(RelayEvent::Arrived { sub, action: req });
    let full = {
        let subs = shared.state.subs.borrow();
        !subs.contains_key(sub) && subs.len() >= shared.limit
    };
    if full {
        let how = "refused at admission: too many subscriptions";
        shared.refuse_over_limit(lifecycle, sub, req, how).await;
        return None;
    }
    let lease = shared.new_lease(req, sub, channel);
    let mut subs = shared.state.subs.borrow_mut();
    let entry = subs.entry(sub).or_insert_with(|| Entry {
        owner: req,
        holder: None,
        pending: Vec::new(),
    });
    entry.owner = req;
    entry.pending.push(lease.clone());
    Some(lease)
}

/// CLOSE x: under the lifecycle lock cancel and remove x's lineage, then queue CLOSED.
pub async fn handle_close(shared: &Shared, close: Action, sub: SubId) {
    let lifecycle = shared.lifecycle.lock().await;
    if shared.state.is_closed() {
        return;
    }
    shared.emit(RelayEvent::Arrived { sub, action: close });
    // From here no older request of x may queue anything: fenced senders wait for this lock
    // and then find the lineage gone.
    shared.emit(RelayEvent::TookEffect {
        sub,
        action: close,
        how: "closed",
    });
    shared.retire_lineage(sub).await;
    drop(lifecycle);
    shared
        .send(Frame {
            sub,
            kind: FrameKind::Closed(""),
            from: close,
        })
        .await;
}
