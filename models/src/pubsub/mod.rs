//! Pubsub: topic retain/release with refcounts, a bounded subscriber command queue, and the
//! subscriber task (reference: relay-req-cutover.md, the pubsub part of the change).
//!
//! Start state: connection c2 holds a subscription on topic t0, which the subscriber's broker
//! link carries. Tasks: `conn:c1` opens a subscription on t1; `conn:c2` opens one on t2 (and,
//! with `teardown`, then tears down); `broker` publishes a message on t0 (with `message`);
//! `subscriber` runs the select! over hints, the reconcile wake-up and received messages.
//! Each open and teardown retains/releases under the connection's lifecycle lock; a received
//! message is dispatched to each connection retaining its topic under that connection's lock.

mod connection;
mod layer;
mod properties;
mod subscriber;
mod variant;

use std::fmt;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sim::sync::channel;
use sim::{History, Model, Monitor};

pub use connection::Conn;
pub use layer::{Command, Emit, PubSub, PubSubEvent, SubscriberParts, Topic, TopicState};
pub use properties::RetainedSubscribed;
pub use subscriber::{Dispatch, Message, Subscriber};
pub use variant::{FullQueue, Guards, Variant};

/// Scenario parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Capacity of the subscriber's command queue.
    pub queue: usize,
    /// The broker publishes a message on t0 (held by c2) while the connections open.
    pub message: bool,
    /// c2 tears down (CLOSE / disconnect: releases every topic) after opening.
    pub teardown: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            queue: 1,
            message: true,
            teardown: false,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), String> {
        crate::bounds::check("queue", self.queue, 1, 16)
    }
}

/// What the pubsub model records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    PubSub(PubSubEvent),
    /// The broker accepted a message on a topic.
    Published(Message),
    /// A connection's outbound queue took the message.
    Delivered {
        conn: &'static str,
        msg: Message,
    },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::PubSub(e) => e.fmt(f),
            Event::Published(m) => write!(f, "broker: PUBLISH {} on {}", m.id, m.topic),
            Event::Delivered { conn, msg } => {
                write!(f, "{conn}: EVENT {} ({}) queued", msg.id, msg.topic)
            }
        }
    }
}

/// State shared by the model's tasks.
pub(crate) struct Shared {
    pub conns: Rc<Vec<Conn>>,
    pub pubsub: PubSub,
    pub emit: Emit<Event>,
}

pub struct PubSubModel {
    pub variant: Variant,
    pub guards: Guards,
    pub params: Params,
}

impl PubSubModel {
    pub fn new(variant: Variant, params: Params) -> Self {
        PubSubModel {
            variant,
            guards: variant.guards(),
            params,
        }
    }

    /// The variant with one guard knocked out (a mutant); `None` if it has no such guard.
    pub fn mutant(variant: Variant, params: Params, guard: &str) -> Option<Self> {
        let mut model = PubSubModel::new(variant, params);
        model.guards.knock_out(guard).then_some(model)
    }
}

impl Model for PubSubModel {
    /// Refcounts, subscriptions, the reconcile flag and retained sets are recorded `Shared`
    /// cells; the rest goes through locks and channels.
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
        let conns = Rc::new(vec![Conn::new("c1"), Conn::new("c2")]);
        let state = Rc::new(TopicState::new());
        let history = History::new(properties::invariants(state.clone(), conns.clone()));
        let emit: Emit<Event> = {
            let h = history.clone();
            Rc::new(move |e| h.emit(e))
        };
        let layer_emit: Emit<PubSubEvent> = {
            let emit = emit.clone();
            Rc::new(move |e| emit(Event::PubSub(e)))
        };
        let (pubsub, parts) = PubSub::new(state, self.guards, p.queue, layer_emit);
        // Start state: c2 holds t0, subscribed.
        pubsub.preload("t0");
        conns[1].retained.with_mut(|r| r.insert("t0"));
        let shared = Rc::new(Shared {
            conns,
            pubsub,
            emit,
        });
        let (link_tx, link_rx) = channel("broker.link", 1);
        let subscriber = Subscriber {
            parts,
            inbox: Some((link_rx, Rc::new(connection::Recipients(shared.clone())))),
        };
        sim::spawn("subscriber", subscriber.run());
        sim::spawn(
            "conn:c1",
            connection::run_connection(shared.clone(), 0, vec!["t1"], false),
        );
        sim::spawn(
            "conn:c2",
            connection::run_connection(shared.clone(), 1, vec!["t2"], p.teardown),
        );
        if p.message {
            let msg = Message {
                topic: "t0",
                id: "m1",
            };
            sim::spawn("broker", connection::run_broker(shared, link_tx, msg));
        }
        history.monitor()
    }
}
