//! MQTT v5 broker: the QoS1 backlog and lane, and the reconnect/bind race
//! (reference: broker-bind-race.md).
//!
//! Start state: the broker has restarted; client c reconnects with clean_start=0 holding
//! `inflight` persisted outbound QoS1 messages (sent before the restart, never acked) and an
//! empty queue. Tasks: the client handler (`handler:c`), one router per publisher
//! (`publisher:pN`), and the client on the wire (`peer:c`).

mod handler;
mod message;
mod peer;
mod properties;
mod queue;
mod router;
mod storage;
mod variant;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sim::sync::{channel, Notify, RwLock, Sender};
use sim::{Grain, History, Model, Monitor};

pub use message::{BrokerEvent, Msg, MsgId, Route};
pub use variant::{Behind, Guards, Variant};

use handler::ClientHandler;
use peer::ClientPeer;
use queue::ClientQueue;
use router::Router;
use storage::Storage;

/// The reconnecting client's id.
const CLIENT: &str = "c";

/// Scenario parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Concurrent publishers to c's topic.
    pub publishers: usize,
    /// Messages each publisher sends.
    pub messages: usize,
    /// c's receive maximum: unacked QoS1 messages in flight at once.
    pub window: usize,
    /// Capacity of the bounded QoS1 lane.
    pub lane_capacity: usize,
    /// Outbound QoS1 messages persisted in flight at the restart.
    pub inflight: usize,
    /// Which operations are scheduling points.
    pub grain: Grain,
    /// How the serve loop waits for work (a busy-poll is a livelock by design: a mutant for
    /// checking that a search reports one).
    #[serde(skip_serializing_if = "Idle::is_park")]
    pub idle: Idle,
}

/// How the client handler's serve loop waits when no arm can make progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Idle {
    /// Parks on the wake notify until a router, bind or an ack wakes it (the real code).
    #[default]
    Park,
    /// Polls again after a plain await (`sim::yield_point("poll")`): it never parks, so once
    /// everything is delivered it spins forever.
    BusyPoll,
    /// A spin-wait: polls again after a fair `sim::yield_now()` (letting the routers and the
    /// client run), and ends once it has put the whole workload on the wire.
    SpinWait,
}

impl Idle {
    fn is_park(&self) -> bool {
        *self == Idle::Park
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            publishers: 1,
            messages: 1,
            window: 1,
            lane_capacity: 1,
            inflight: 1,
            grain: Grain::Await,
            idle: Idle::Park,
        }
    }
}

impl Params {
    /// The largest `publishers x messages + inflight`: every message gets a 16-bit MQTT packet
    /// id, counted up from the persisted ones.
    pub const MAX_PACKET_IDS: usize = u16::MAX as usize - 1;

    pub fn validate(&self) -> Result<(), String> {
        use crate::bounds::{check, MAX_SIZE, MAX_TASKS};
        check("publishers", self.publishers, 1, MAX_TASKS)?;
        check("messages", self.messages, 1, MAX_SIZE)?;
        check("window", self.window, 1, MAX_SIZE)?;
        check("lane_capacity", self.lane_capacity, 1, MAX_SIZE)?;
        check("inflight", self.inflight, 0, 1000)?;
        let packets = self.publishers * self.messages + self.inflight;
        if packets > Self::MAX_PACKET_IDS {
            return Err(format!(
                "publishers x messages + inflight must be at most {} (MQTT packet ids are 16 \
                 bits), not {packets}",
                Self::MAX_PACKET_IDS
            ));
        }
        Ok(())
    }
}

/// A session in the clients map: what a router needs to reach c.
#[derive(Hash)]
struct Session {
    lane: Sender<Msg>,
}

/// State shared by the broker's tasks.
struct Shared {
    clients: RwLock<BTreeMap<&'static str, Session>>,
    queue: ClientQueue,
    storage: Storage,
    /// Wakes the serve loop: routers after routing, bind when done, acks.
    wake: Notify,
    guards: Guards,
    history: History<BrokerEvent>,
}

pub struct Broker {
    pub variant: Variant,
    pub guards: Guards,
    pub params: Params,
}

impl Broker {
    pub fn new(variant: Variant, params: Params) -> Self {
        Broker {
            variant,
            guards: variant.guards(),
            params,
        }
    }

    /// The variant with one guard knocked out (a mutant); `None` if it has no such guard.
    pub fn mutant(variant: Variant, params: Params, guard: &str) -> Option<Self> {
        let mut broker = Broker::new(variant, params);
        broker.guards.knock_out(guard).then_some(broker)
    }
}

impl Model for Broker {
    fn grain(&self) -> Grain {
        self.params.grain
    }

    /// Tasks share only the clients lock, the queue (mutex, atomics, Shared ghost length), the
    /// storage (Shared), channels, the wake notify and the history.
    /// Each task is one chain of awaits (its `select!` is a `choose`): it may park right at
    /// its point.
    fn one_point_per_poll(&self) -> bool {
        true
    }

    fn reduction_safe(&self) -> bool {
        true
    }

    /// The routers run one code and differ only in their publisher's number, which every
    /// value carries in a `MsgId` (hashed as a `sim::Member`); the invariants treat every
    /// publisher's stream alike.
    fn symmetric_members(&self) -> Vec<usize> {
        (1..=self.params.publishers).collect()
    }

    /// All of it in engine objects; the handler's own cells (bound, in-flight window, next
    /// packet id) are named at the serve loop's head, the peer carries nothing across its loop,
    /// and the routers do not loop over any await.
    fn state_visible(&self) -> bool {
        true
    }

    fn start(&self) -> Rc<dyn Monitor> {
        let p = &self.params;
        // The broker's invariants compare deliveries (all emitted by the handler, in wire
        // order) and sets of owed and delivered messages at quiescence; a Published event comes
        // before its Delivered through the lane or queue. No verdict depends on how two tasks'
        // events interleave otherwise.
        let history =
            History::new(properties::invariants(p.publishers, p.inflight)).order_per_task();
        let persisted: Vec<Msg> = (1..=p.inflight)
            .map(|seq| Msg {
                id: MsgId { publisher: 0, seq },
                packet_id: Some(seq as u16),
                dup: false,
            })
            .collect();
        for msg in &persisted {
            history.emit(BrokerEvent::Restored {
                id: msg.id,
                packet_id: msg.packet_id.unwrap_or_default(),
            });
        }
        let shared = Rc::new(Shared {
            clients: RwLock::new("clients", BTreeMap::new()),
            queue: ClientQueue::new(self.guards.behind),
            storage: Storage::new(persisted),
            wake: Notify::new("wake"),
            guards: self.guards,
            history: history.clone(),
        });
        let (lane_tx, lane_rx) = channel("lane", p.lane_capacity);
        let (wire_tx, wire_rx) = channel("wire", p.window);
        let (ack_tx, ack_rx) = channel("acks", p.window);
        let handler = ClientHandler {
            shared: shared.clone(),
            generation: 1,
            lane_tx,
            lane_rx,
            wire: wire_tx,
            acks: ack_rx,
            window: p.window,
            bound: Cell::new(false),
            inflight: RefCell::new(BTreeMap::new()),
            next_packet_id: Cell::new(p.inflight as u16 + 1),
            idle: p.idle,
            delivered: Cell::new(0),
            expected: p.inflight + p.publishers * p.messages,
        };
        sim::spawn(format!("handler:{CLIENT}"), handler.run());
        for publisher in 1..=p.publishers {
            let router = Router {
                shared: shared.clone(),
                publisher,
                messages: p.messages,
            };
            sim::spawn_member(format!("publisher:p{publisher}"), publisher, router.run());
        }
        let peer = ClientPeer {
            shared,
            wire: wire_rx,
            acks: ack_tx,
        };
        sim::spawn(format!("peer:{CLIENT}"), peer.run());
        history.monitor()
    }
}
