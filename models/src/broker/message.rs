//! Messages and the events the broker model records.

use std::fmt;
use std::hash::{Hash, Hasher};

/// Who published a message: `restart#i` is the i-th message in flight when the broker restarted
/// (published before everything else), `pN#k` the k-th message of publisher N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MsgId {
    /// 0 for the persisted in-flight messages, 1.. for this run's publishers.
    pub publisher: usize,
    pub seq: usize,
}

/// The publisher is hashed as a `sim::Member`: the publishers are interchangeable
/// (`Broker::symmetric_members`).
impl Hash for MsgId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        sim::Member(self.publisher).hash(state);
        self.seq.hash(state);
    }
}

impl fmt::Display for MsgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.publisher == 0 {
            write!(f, "restart#{}", self.seq)
        } else {
            write!(f, "p{}#{}", self.publisher, self.seq)
        }
    }
}

/// A QoS1 PUBLISH for client c on the topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Msg {
    pub id: MsgId,
    /// Assigned when first sent; a redelivery keeps its original packet id.
    pub packet_id: Option<u16>,
    pub dup: bool,
}

/// What happened, as the client sees it plus ghost facts (what was owed to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrokerEvent {
    /// Ghost: at restart, `id` was persisted in flight: sent to c before, never acked.
    Restored { id: MsgId, packet_id: u16 },
    /// Ghost: the broker accepted `id` from its publisher.
    Published { id: MsgId },
    /// Ghost: where the router put a message for c.
    Routed { id: MsgId, to: Route },
    /// Ghost: bind() put a persisted in-flight message back at the front of the queue.
    Requeued { id: MsgId },
    /// Ghost: drain_backlog took a message off the queue.
    Drained { id: MsgId },
    /// A PUBLISH for c went on the wire.
    Delivered {
        id: MsgId,
        packet_id: u16,
        dup: bool,
    },
    /// c acknowledged a packet id.
    Acked { packet_id: u16 },
}

/// The router's decision for one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// c was not in the clients map: the (offline) queue.
    Offline,
    /// c was online but behind(): the queue.
    Behind,
    /// c was online and not behind: the QoS1 lane.
    Lane,
    /// The lane was full: handed off to the queue.
    HandOff,
}

impl fmt::Display for BrokerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BrokerEvent::Restored { id, packet_id } => {
                write!(f, "restored {id} in flight (packet {packet_id}, unacked)")
            }
            BrokerEvent::Published { id } => write!(f, "accepted {id} from its publisher"),
            BrokerEvent::Routed { id, to } => match to {
                Route::Offline => write!(f, "route {id} -> queue (c offline)"),
                Route::Behind => write!(f, "route {id} -> queue (behind)"),
                Route::Lane => write!(f, "route {id} -> QoS1 lane (not behind)"),
                Route::HandOff => write!(f, "route {id} -> queue (lane full)"),
            },
            BrokerEvent::Requeued { id } => write!(f, "bind: requeue_front {id} DUP"),
            BrokerEvent::Drained { id } => write!(f, "drain_backlog: pop {id}"),
            BrokerEvent::Delivered { id, packet_id, dup } => write!(
                f,
                "wire: PUBLISH {id} packet {packet_id}{} -> c",
                if *dup { " DUP" } else { "" }
            ),
            BrokerEvent::Acked { packet_id } => write!(f, "wire: PUBACK {packet_id} <- c"),
        }
    }
}
