//! The subscriber task: one link to the broker (Redis), a select! over its command queue, the
//! coalesced reconcile wake-up and the messages the link receives.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use sim::sync::Receiver;
use sim::{choose, yield_point};

use super::layer::{Command, PubSubEvent, SubscriberParts, Topic};

/// A message the broker link received on a topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    pub topic: Topic,
    pub id: &'static str,
}

/// Hands a received message to the local recipients of its topic.
pub trait Dispatch {
    fn dispatch(&self, msg: Message) -> Pin<Box<dyn Future<Output = ()> + '_>>;
}

pub struct Subscriber {
    pub parts: SubscriberParts,
    /// Messages from the broker link, and who receives them (the pubsub model has them; the
    /// relay model drives its live fan-out by itself).
    pub inbox: Option<(Receiver<Message>, Rc<dyn Dispatch>)>,
}

#[derive(Clone, Copy)]
enum Arm {
    Command,
    Reconcile,
    Message,
}

impl Subscriber {
    pub async fn run(self) {
        let p = &self.parts;
        loop {
            let mut ready = Vec::with_capacity(3);
            if !p.commands.is_empty() {
                ready.push(Arm::Command);
            }
            if p.guards.reconcile_arm && p.state.reconcile.with(|r| *r) {
                ready.push(Arm::Reconcile);
            }
            if self.inbox.as_ref().is_some_and(|(rx, _)| !rx.is_empty()) {
                ready.push(Arm::Message);
            }
            let arm = match ready.len() {
                0 => {
                    p.wake.notified_idle().await;
                    continue;
                }
                // select! polls the ready arms from a random start.
                1 => ready[0],
                n => ready[choose(n).await],
            };
            match arm {
                Arm::Command => {
                    if let Some(cmd) = p.commands.try_recv().await {
                        self.apply(cmd).await;
                    }
                }
                Arm::Reconcile => self.reconcile().await,
                Arm::Message => {
                    let (rx, dispatch) = self.inbox.as_ref().expect("message arm without inbox");
                    if let Some(msg) = rx.try_recv().await {
                        dispatch.dispatch(msg).await;
                    }
                }
            }
        }
    }

    /// A hint is applied against the desired state: subscribe only a topic still retained,
    /// unsubscribe only a topic no longer retained.
    async fn apply(&self, cmd: Command) {
        let state = &self.parts.state;
        match cmd {
            Command::Subscribe(t) => {
                if state.refcount(t) > 0 && !state.is_subscribed(t) {
                    self.subscribe(t).await;
                }
            }
            Command::Unsubscribe(t) => {
                if state.refcount(t) == 0 && state.is_subscribed(t) {
                    self.unsubscribe(t).await;
                }
            }
        }
    }

    /// The reconcile arm: subscribe every retained topic the link is missing, unsubscribe every
    /// topic no longer retained.
    async fn reconcile(&self) {
        let state = &self.parts.state;
        state.reconcile.with_mut(|r| *r = false);
        (self.parts.emit)(PubSubEvent::Reconciling);
        for (t, _) in state.missing() {
            self.subscribe(t).await;
        }
        for t in state.released() {
            self.unsubscribe(t).await;
        }
    }

    async fn subscribe(&self, t: Topic) {
        yield_point("redis SUBSCRIBE").await;
        self.parts.state.subscribed.with_mut(|s| s.insert(t));
        (self.parts.emit)(PubSubEvent::Subscribed(t));
    }

    async fn unsubscribe(&self, t: Topic) {
        yield_point("redis UNSUBSCRIBE").await;
        self.parts.state.subscribed.with_mut(|s| s.remove(t));
        (self.parts.emit)(PubSubEvent::Unsubscribed(t));
    }
}
