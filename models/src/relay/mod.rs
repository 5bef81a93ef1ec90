//! Nostr relay, one connection: REQ / CLOSE / same-ID replacement cutovers, live fan-out and
//! access-revocation eviction (reference: relay-req-cutover.md).
//!
//! Tasks: the read loop (`reader`: the client's frames in arrival order, admission, CLOSE,
//! disconnect at EOF), one handler per REQ (`handler:r1`, ...), the `writer` that puts frames
//! on the wire, the pubsub `subscriber` behind topic retain, and — in the scenarios that have
//! them — a live fan-out of an event on a channel (`fanout`) and an access revocation on a
//! channel (`revoke`). Requests and CLOSEs are named by arrival order (`r1`, `close2`); `r0`
//! is a subscription already open (answered with EOSE) when the run starts.

mod close;
mod connection;
mod fanout;
mod frame;
mod properties;
mod read_loop;
mod req;
mod revoke;
mod variant;
mod writer;

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sim::sync::{channel, Mutex};
use sim::{History, Model, Monitor};

pub use connection::State;
pub use frame::{Action, ActionKind, Channel, Frame, FrameKind, RelayEvent, SubId};
pub use req::Access;
pub use variant::{Guards, Variant};

use crate::pubsub::{self, Emit, PubSub, PubSubEvent, Subscriber, TopicState};
use connection::{Entry, Lease, Shared, CONN};
use read_loop::{ClientFrame, ReadLoop};

/// Which client actions happen (and what else runs alongside them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Script {
    /// REQ x (r1, channel c1).
    Req,
    /// REQ x (r1, c1), then CLOSE x (close2).
    ReqClose,
    /// REQ x (r1, c1), then a same-ID REQ x (r2, c2).
    SameId,
    /// REQ x (r1, c1), then REQ y (r2, c2): two ids against the subscription limit.
    TwoIds,
    /// x is open (r0, c1); a same-ID REQ x (r1, c2) arrives while access to c1 is revoked.
    RevokeReplaced,
    /// x is open (r0, c1); an event on c1 fans out while a same-ID REQ x (r1, c2) and then
    /// CLOSE x (close2) arrive.
    LiveRace,
}

/// Scenario parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub script: Script,
    /// Whether access checks may fail (refused, database error).
    pub access: Access,
    /// Stored events each REQ's historical query returns (0..=3).
    pub stored: usize,
    /// The per-connection subscription limit.
    pub limit: usize,
    /// The client disconnects after its frames.
    pub disconnect: bool,
    /// Capacity of the bounded outbound queue.
    pub outbound: usize,
    /// Capacity of the pubsub subscriber's command queue.
    pub pubsub_queue: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            script: Script::ReqClose,
            access: Access::Ok,
            stored: 1,
            limit: 2,
            disconnect: false,
            outbound: 8,
            pubsub_queue: 2,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), String> {
        use crate::bounds::{check, MAX_SIZE};
        check("stored", self.stored, 0, 3)?;
        check("limit", self.limit, 1, MAX_SIZE)?;
        check("outbound", self.outbound, 1, MAX_SIZE)?;
        check("pubsub_queue", self.pubsub_queue, 1, MAX_SIZE)
    }
}

/// What a script sets up.
struct Setup {
    /// A subscription open before the run: (sub id, channel), held by r0.
    open: Option<(SubId, Channel)>,
    frames: Vec<ClientFrame>,
    revoke: Option<Channel>,
    live: Option<Channel>,
}

impl Script {
    fn setup(self) -> Setup {
        let req = |seq, sub, channel| ClientFrame::Req {
            req: Action::req(seq),
            sub,
            channel,
        };
        let close = |seq, sub| ClientFrame::Close {
            close: Action::close(seq),
            sub,
        };
        let plain = |frames| Setup {
            open: None,
            frames,
            revoke: None,
            live: None,
        };
        match self {
            Script::Req => plain(vec![req(1, "x", "c1")]),
            Script::ReqClose => plain(vec![req(1, "x", "c1"), close(2, "x")]),
            Script::SameId => plain(vec![req(1, "x", "c1"), req(2, "x", "c2")]),
            Script::TwoIds => plain(vec![req(1, "x", "c1"), req(2, "y", "c2")]),
            Script::RevokeReplaced => Setup {
                open: Some(("x", "c1")),
                frames: vec![req(1, "x", "c2")],
                revoke: Some("c1"),
                live: None,
            },
            Script::LiveRace => Setup {
                open: Some(("x", "c1")),
                frames: vec![req(1, "x", "c2"), close(2, "x")],
                revoke: None,
                live: Some("c1"),
            },
        }
    }
}

pub struct Relay {
    pub variant: Variant,
    pub guards: Guards,
    pub params: Params,
}

impl Relay {
    pub fn new(variant: Variant, params: Params) -> Self {
        Relay {
            variant,
            guards: variant.guards(),
            params,
        }
    }

    /// The variant with one guard knocked out (a mutant); `None` if it has no such guard.
    pub fn mutant(variant: Variant, params: Params, guard: &str) -> Option<Self> {
        if !variant.guard_names().contains(&guard) {
            return None;
        }
        let mut relay = Relay::new(variant, params);
        relay.guards.knock_out(guard).then_some(relay)
    }
}

impl Model for Relay {
    /// Tasks share the subscription map, gauge and connection map only under the lifecycle
    /// lock; everything read without it (registry, fan-out index, closed flag, cancellation,
    /// pending work, the pubsub layer) is in recorded `Shared` cells, channels or locks.
    /// Each task is one chain of awaits (its `select!` is a `choose`): it may park right at
    /// its point.
    fn one_point_per_poll(&self) -> bool {
        true
    }

    fn reduction_safe(&self) -> bool {
        true
    }

    fn start(&self) -> Rc<dyn Monitor> {
        let p = &self.params;
        let setup = p.script.setup();
        let state = Rc::new(State::new());
        let topics = Rc::new(TopicState::new());
        let history = History::new(properties::invariants(
            p.limit,
            state.clone(),
            topics.clone(),
        ));
        let pubsub_emit: Emit<PubSubEvent> = {
            let h = history.clone();
            Rc::new(move |e| h.emit(RelayEvent::PubSub(e)))
        };
        // The relay runs on the fixed pubsub layer; the pubsub model explores its variants.
        let (pubsub, parts) = PubSub::new(
            topics,
            pubsub::Variant::CoalescedReconcile.guards(),
            p.pubsub_queue,
            pubsub_emit,
        );
        let (out_tx, out_rx) = channel("outbound", p.outbound);
        let shared = Rc::new(Shared {
            state: state.clone(),
            lifecycle: Mutex::new("lifecycle", ()),
            out: out_tx,
            pubsub,
            guards: self.guards,
            limit: p.limit,
            history: history.clone(),
        });
        state.connections.borrow_mut().insert(CONN);
        if let Some((sub, channel)) = setup.open {
            open_before_run(&shared, sub, channel);
        }
        sim::spawn(
            "reader",
            ReadLoop {
                shared: shared.clone(),
                frames: setup.frames,
                eof: p.disconnect,
                access: p.access,
                stored: p.stored,
            }
            .run(),
        );
        sim::spawn("writer", writer::writer(shared.clone(), out_rx));
        sim::spawn("subscriber", Subscriber { parts, inbox: None }.run());
        if let Some(channel) = setup.live {
            sim::spawn(
                "fanout",
                fanout::live_fanout(shared.clone(), channel, "live#1"),
            );
        }
        if let Some(channel) = setup.revoke {
            sim::spawn("revoke", revoke::revoke(shared.clone(), channel));
        }
        history.monitor()
    }
}

/// Start state: `sub` is open on `channel`, held by r0, its EOSE already on the wire.
fn open_before_run(shared: &Shared, sub: SubId, channel: Channel) {
    let r0 = Action::req(0);
    let lease = Rc::new(Lease {
        req: r0,
        sub,
        channel,
        cancelled: sim::sync::Shared::new("r0.cancelled", false),
        pending_work: sim::sync::Shared::new("r0.pending", false),
    });
    shared.emit(RelayEvent::Arrived { sub, action: r0 });
    shared.state.subs.borrow_mut().insert(
        sub,
        Entry {
            owner: r0,
            holder: Some(lease.clone()),
            pending: Vec::new(),
        },
    );
    shared.register(&lease);
    shared.pubsub.preload(channel);
    shared.emit(RelayEvent::TookEffect {
        sub,
        action: r0,
        how: "committed: registered",
    });
    let eose = Frame {
        sub,
        kind: FrameKind::Eose,
        from: r0,
    };
    shared.emit(RelayEvent::Queued(eose));
    shared.emit(RelayEvent::Wire(eose));
}
