//! The broker's invariants, composed from the engine's generic checkers.

use std::fmt;

use sim::invariant::{EventuallyDelivered, FifoPerKey, Invariant, NoDuplicate};

use super::message::{BrokerEvent, MsgId};

/// The properties every run must have.
///
/// - `no-duplicate`: each message reaches c once in this session; the DUP resend of a message
///   that was in flight before the restart is the one allowed repeat.
/// - `delivery-order` (MQTT-4.4.0-1, MQTT-4.6.0-5): on each publisher's stream to c, first
///   deliveries follow publish order, and the in-flight messages re-sent after the restart
///   precede every newer message, in their original order.
/// - `nothing-stranded`: at quiescence, every restored or accepted message reached c.
///
/// Deadlock is the engine's own check.
pub fn invariants(publishers: usize, inflight: usize) -> Vec<Box<dyn Invariant<BrokerEvent>>> {
    vec![
        Box::new(NoDuplicate::new(
            "no-duplicate",
            |e: &BrokerEvent| match e {
                BrokerEvent::Restored { id, .. } => Some((*id, false)),
                BrokerEvent::Delivered { id, dup, .. } => Some((*id, *dup)),
                _ => None,
            },
        )),
        Box::new(
            FifoPerKey::new("delivery-order", move |e: &BrokerEvent| match e {
                BrokerEvent::Delivered { id, dup, .. } => {
                    let label = Delivery { id: *id, dup: *dup };
                    if id.publisher == 0 {
                        // Published before the restart: first on every stream.
                        (1..=publishers)
                            .map(|p| (Stream(p), id.seq as u64, label))
                            .collect()
                    } else {
                        vec![(Stream(id.publisher), (inflight + id.seq) as u64, label)]
                    }
                }
                _ => Vec::new(),
            })
            // The pictures highlight the two frames by the keys the handler marks them with.
            .frames_keyed_by(|d: &Delivery| d.id.to_string()),
        ),
        Box::new(EventuallyDelivered::new(
            "nothing-stranded",
            |e: &BrokerEvent| match e {
                BrokerEvent::Restored { id, .. } | BrokerEvent::Published { id } => Some(*id),
                _ => None,
            },
            |e: &BrokerEvent| match e {
                BrokerEvent::Delivered { id, .. } => Some(*id),
                _ => None,
            },
        )),
    ]
}

/// One publisher's stream of messages to c.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Stream(usize);

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the stream p{} -> c", self.0)
    }
}

#[derive(Clone, Copy)]
struct Delivery {
    id: MsgId,
    dup: bool,
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            self.id,
            if self.dup { " (DUP resend)" } else { "" }
        )
    }
}
