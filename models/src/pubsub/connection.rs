//! The pubsub model's other actors: connections that retain and release topics under their
//! lifecycle lock, the broker publishing a message, and the dispatch of a received message to
//! the connections that retain its topic (queued under each one's lifecycle lock, as the fenced
//! live path does).

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use sim::sync::{Mutex, Sender, Shared as SharedCell};

use super::layer::{PubSub, Topic};
use super::subscriber::{Dispatch, Message};
use super::{Event, Shared};

pub struct Conn {
    pub name: &'static str,
    /// The connection's lifecycle lock: retains, releases and deliveries happen under it.
    pub lifecycle: Mutex<()>,
    /// Topics this connection holds a retain on (its subscriptions' channels).
    pub retained: SharedCell<BTreeSet<Topic>>,
}

impl Conn {
    pub fn new(name: &'static str) -> Self {
        Conn {
            name,
            lifecycle: Mutex::new(format!("{name}.lifecycle"), ()),
            retained: SharedCell::new(format!("{name}.retained"), BTreeSet::new()),
        }
    }

    /// A REQ on `topic`'s channel registers: retain under the lifecycle lock.
    pub async fn open(&self, pubsub: &PubSub, topic: Topic) {
        let _lifecycle = self.lifecycle.lock().await;
        pubsub.retain_topic(topic).await;
        self.retained.with_mut(|r| r.insert(topic));
    }

    /// CLOSE / disconnect: release every retained topic under the lifecycle lock.
    pub async fn teardown(&self, pubsub: &PubSub) {
        let _lifecycle = self.lifecycle.lock().await;
        let topics: Vec<Topic> = self.retained.with(|r| r.iter().copied().collect());
        for topic in topics {
            pubsub.release_topic(topic).await;
            self.retained.with_mut(|r| r.remove(topic));
        }
    }
}

/// A connection's task: open its subscriptions, then (when the scenario says so) tear down.
pub async fn run_connection(shared: Rc<Shared>, conn: usize, topics: Vec<Topic>, teardown: bool) {
    let c = &shared.conns[conn];
    for topic in topics {
        c.open(&shared.pubsub, topic).await;
    }
    if teardown {
        c.teardown(&shared.pubsub).await;
    }
}

/// The broker delivers a message published on `msg.topic` to the subscriber's link, if the link
/// carries that topic.
pub async fn run_broker(shared: Rc<Shared>, link: Sender<Message>, msg: Message) {
    (shared.emit)(Event::Published(msg));
    if shared.pubsub.state.is_subscribed(msg.topic) {
        link.send(msg).await;
        shared.pubsub.wake.notify_one().await;
    }
}

/// Local dispatch: each connection retaining the topic gets the message, queued under its
/// lifecycle lock.
pub struct Recipients(pub Rc<Shared>);

impl Dispatch for Recipients {
    fn dispatch(&self, msg: Message) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        Box::pin(async move {
            let shared = &self.0;
            let recipients: Vec<usize> = (0..shared.conns.len())
                .filter(|&i| shared.conns[i].retained.with(|r| r.contains(msg.topic)))
                .collect();
            for i in recipients {
                let c = &shared.conns[i];
                let _lifecycle = c.lifecycle.lock().await;
                if c.retained.with(|r| r.contains(msg.topic)) {
                    (shared.emit)(Event::Delivered { conn: c.name, msg });
                }
            }
        })
    }
}
