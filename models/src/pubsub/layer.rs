//! The pubsub layer a relay process shares between its connections: retain_topic /
//! release_topic keep a refcount per topic (the desired state) and hint the subscriber task
//! through a bounded command queue when a topic's first retain or last release happens.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;

use sim::sync::{channel, Notify, Receiver, Sender, Shared, TrySendError};

use super::variant::{FullQueue, Guards};

/// A pubsub topic (one per channel).
pub type Topic = &'static str;

/// A hint to the subscriber task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    Subscribe(Topic),
    Unsubscribe(Topic),
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Subscribe(t) => write!(f, "Subscribe({t})"),
            Command::Unsubscribe(t) => write!(f, "Unsubscribe({t})"),
        }
    }
}

/// What the pubsub layer records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PubSubEvent {
    Retained {
        topic: Topic,
        count: usize,
    },
    Released {
        topic: Topic,
        count: usize,
    },
    HintQueued(Command),
    /// The queue was full: the hint was not queued.
    HintDropped(Command),
    /// The coalesced wake-up was left for the subscriber.
    ReconcileScheduled,
    Reconciling,
    /// The subscriber's link to the broker (Redis) now carries / no longer carries the topic.
    Subscribed(Topic),
    Unsubscribed(Topic),
}

impl fmt::Display for PubSubEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PubSubEvent::Retained { topic, count } => {
                write!(f, "retain {topic} (refcount {count})")
            }
            PubSubEvent::Released { topic, count } => {
                write!(f, "release {topic} (refcount {count})")
            }
            PubSubEvent::HintQueued(c) => write!(f, "hint {c} queued"),
            PubSubEvent::HintDropped(c) => write!(f, "hint {c} not queued: queue full"),
            PubSubEvent::ReconcileScheduled => write!(f, "coalesced reconcile wake-up left"),
            PubSubEvent::Reconciling => write!(f, "subscriber reconciles retained topics"),
            PubSubEvent::Subscribed(t) => write!(f, "redis: SUBSCRIBE {t} done"),
            PubSubEvent::Unsubscribed(t) => write!(f, "redis: UNSUBSCRIBE {t} done"),
        }
    }
}

/// Plain state shared by retainers and the subscriber outside any lock (so each access is
/// recorded for partial-order reduction), readable by invariants at quiescence.
pub struct TopicState {
    /// Retains per topic (the desired state); a topic with no retains is absent.
    pub refcounts: Shared<BTreeMap<Topic, usize>>,
    /// Topics the subscriber's broker link carries.
    pub subscribed: Shared<BTreeSet<Topic>>,
    /// The coalesced reconcile wake-up (a Notify permit: several coalesce into one).
    pub reconcile: Shared<bool>,
}

impl Default for TopicState {
    fn default() -> Self {
        TopicState::new()
    }
}

impl TopicState {
    /// Creates the state (inside a run: its accesses are recorded).
    pub fn new() -> Self {
        TopicState {
            refcounts: Shared::new("pubsub.refcounts", BTreeMap::new()),
            subscribed: Shared::new("pubsub.subscribed", BTreeSet::new()),
            reconcile: Shared::new("pubsub.reconcile", false),
        }
    }

    pub fn refcount(&self, topic: Topic) -> usize {
        self.refcounts.with(|r| r.get(topic).copied().unwrap_or(0))
    }

    pub fn is_subscribed(&self, topic: Topic) -> bool {
        self.subscribed.with(|s| s.contains(topic))
    }

    /// Retained topics the link does not carry.
    pub fn missing(&self) -> Vec<(Topic, usize)> {
        let subscribed = self.subscribed.with(|s| s.clone());
        self.refcounts.with(|r| {
            r.iter()
                .filter(|(t, _)| !subscribed.contains(*t))
                .map(|(t, n)| (*t, *n))
                .collect()
        })
    }

    /// Carried topics no longer retained.
    pub fn released(&self) -> Vec<Topic> {
        let retained: BTreeSet<Topic> = self.refcounts.with(|r| r.keys().copied().collect());
        self.subscribed.with(|s| {
            s.iter()
                .filter(|t| !retained.contains(*t))
                .copied()
                .collect()
        })
    }
}

pub type Emit<E> = Rc<dyn Fn(E)>;

/// The retain/release side, used by connections (under their lifecycle lock).
pub struct PubSub {
    pub state: Rc<TopicState>,
    commands: Sender<Command>,
    /// Wakes the subscriber's select! (a send on its command queue, the reconcile wake-up, a
    /// message from the broker).
    pub(crate) wake: Rc<Notify>,
    guards: Guards,
    emit: Emit<PubSubEvent>,
}

/// The subscriber side, handed to the subscriber task.
pub struct SubscriberParts {
    pub state: Rc<TopicState>,
    pub commands: Receiver<Command>,
    pub wake: Rc<Notify>,
    pub guards: Guards,
    pub emit: Emit<PubSubEvent>,
}

impl PubSub {
    pub fn new(
        state: Rc<TopicState>,
        guards: Guards,
        capacity: usize,
        emit: Emit<PubSubEvent>,
    ) -> (PubSub, SubscriberParts) {
        let (tx, rx) = channel("pubsub.commands", capacity);
        let wake = Rc::new(Notify::new("pubsub.wake"));
        let parts = SubscriberParts {
            state: state.clone(),
            commands: rx,
            wake: wake.clone(),
            guards,
            emit: emit.clone(),
        };
        let pubsub = PubSub {
            state,
            commands: tx,
            wake,
            guards,
            emit,
        };
        (pubsub, parts)
    }

    /// Start state: `topic` is retained once and already subscribed.
    pub fn preload(&self, topic: Topic) {
        self.state
            .refcounts
            .with_mut(|r| *r.entry(topic).or_insert(0) += 1);
        self.state.subscribed.with_mut(|s| s.insert(topic));
    }

    pub async fn retain_topic(&self, topic: Topic) {
        let count = self.state.refcounts.with_mut(|refcounts| {
            let n = refcounts.entry(topic).or_insert(0);
            *n += 1;
            *n
        });
        (self.emit)(PubSubEvent::Retained { topic, count });
        if count == 1 {
            self.hint(Command::Subscribe(topic)).await;
        }
    }

    pub async fn release_topic(&self, topic: Topic) {
        let count = self.state.refcounts.with_mut(|refcounts| {
            let n = refcounts
                .get_mut(topic)
                .expect("release_topic of a topic that is not retained");
            *n -= 1;
            let n = *n;
            if n == 0 {
                refcounts.remove(topic);
            }
            n
        });
        (self.emit)(PubSubEvent::Released { topic, count });
        if count == 0 {
            self.hint(Command::Unsubscribe(topic)).await;
        }
    }

    async fn hint(&self, cmd: Command) {
        match self.guards.full_queue {
            FullQueue::Wait => {
                self.commands.send(cmd).await;
                (self.emit)(PubSubEvent::HintQueued(cmd));
                self.wake.notify_one().await;
            }
            FullQueue::Drop | FullQueue::Coalesce => match self.commands.try_send(cmd).await {
                Ok(()) => {
                    (self.emit)(PubSubEvent::HintQueued(cmd));
                    self.wake.notify_one().await;
                }
                Err(TrySendError::Full(cmd)) => {
                    (self.emit)(PubSubEvent::HintDropped(cmd));
                    let wake_up = match cmd {
                        Command::Subscribe(_) => self.guards.retain_wakeup,
                        Command::Unsubscribe(_) => true,
                    };
                    if self.guards.full_queue == FullQueue::Coalesce && wake_up {
                        self.state.reconcile.with_mut(|r| *r = true);
                        (self.emit)(PubSubEvent::ReconcileScheduled);
                        self.wake.notify_one().await;
                    }
                }
            },
        }
    }
}
