//! The connection's read loop: client frames in arrival order (REQ: admit, then spawn the
//! handler; CLOSE: handled inline), and the disconnect that drains the connection at EOF.

use std::rc::Rc;

use sim::yield_point;

use super::close::{admit, handle_close};
use super::connection::{Shared, CONN};
use super::frame::{Action, Channel, RelayEvent, SubId};
use super::req::{handle_req, Access};

/// A frame the client sends.
#[derive(Clone, Copy, Debug)]
pub enum ClientFrame {
    Req {
        req: Action,
        sub: SubId,
        channel: Channel,
    },
    Close {
        close: Action,
        sub: SubId,
    },
}

pub struct ReadLoop {
    pub shared: Rc<Shared>,
    pub frames: Vec<ClientFrame>,
    /// The client goes away after its frames.
    pub eof: bool,
    pub access: Access,
    pub stored: usize,
}

impl ReadLoop {
    pub async fn run(self) {
        let shared = &self.shared;
        for frame in &self.frames {
            yield_point("ws: read frame").await;
            match *frame {
                ClientFrame::Req { req, sub, channel } => {
                    let lease = if shared.guards.token_at_admission {
                        admit(shared, req, sub, channel).await
                    } else {
                        shared.emit(RelayEvent::Arrived { sub, action: req });
                        Some(shared.new_lease(req, sub, channel))
                    };
                    if let Some(lease) = lease {
                        sim::spawn(
                            format!("handler:{req}"),
                            handle_req(shared.clone(), lease, self.access, self.stored),
                        );
                    }
                }
                ClientFrame::Close { close, sub } => handle_close(shared, close, sub).await,
            }
        }
        if self.eof {
            yield_point("ws: read EOF").await;
            disconnect(shared).await;
        }
    }
}

/// Disconnect: under the lifecycle lock, mark the connection closed, cancel and drain every
/// lineage (registry, fan-out index, topic refcounts, gauge), and leave the connection map.
async fn disconnect(shared: &Shared) {
    let _lifecycle = shared.lifecycle.lock().await;
    shared.state.closed.with_mut(|c| *c = true);
    let subs: Vec<SubId> = shared.state.subs.borrow().keys().copied().collect();
    for sub in subs {
        shared.retire_lineage(sub).await;
    }
    shared.state.connections.borrow_mut().remove(CONN);
    shared.emit(RelayEvent::Disconnected);
}
