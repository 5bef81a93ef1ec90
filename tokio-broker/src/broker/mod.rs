//! The MQTT v5 broker's QoS1 backlog and lane for one client `c`, as tokio code: the client
//! queue ([`ClientQueue`]), the router ([`Broker::route`]), the client handler
//! ([`ClientHandler`]: register_session, bind, serve) and session storage
//! ([`SessionStore`]: in memory, [`MemStore`]; on a file, [`FileStore`]). Over a real
//! transport: the TCP front end ([`FrontEnd`], the line protocol of [`Frame`]) and c over TCP
//! ([`TcpClient`]). This file and its modules are compiled twice (see the crate's docs): `rt`
//! is the runtime, `atomic` the atomics.

mod client;
mod file_store;
mod front_end;
mod handler;
mod observed_store;
mod protocol;
mod queue;
mod router;
mod storage;
mod tcp_client;
mod variant;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The broker's own synchronous locks (see `sim::Mutex`); c's log, the test's oracle, keeps
/// std's.
use super::Mutex as BrokerMutex;
use super::{atomic, round_trip, rt};
use rt::sync::mpsc;
use rt::sync::{Notify, RwLock};

pub use client::{Client, ClientLog};
pub use file_store::{Durability, FileStore, LOG_FILE};
pub use front_end::FrontEnd;
pub use handler::ClientHandler;
pub use observed_store::ObservedStore;
pub use protocol::Frame;
pub use queue::ClientQueue;
pub use storage::{MemStore, SessionStore};
pub use tcp_client::TcpClient;
pub use variant::{Behind, Guards, Variant};

/// The client whose session the broker restores.
pub const CLIENT: &str = "c";

/// Who published a message: publisher 0 stands for the messages in flight before a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MsgId {
    pub publisher: usize,
    pub seq: usize,
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

/// A QoS1 PUBLISH for c.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Msg {
    pub id: MsgId,
    /// Assigned when first sent; a redelivery keeps its original packet id.
    pub packet_id: Option<u16>,
    pub dup: bool,
}

impl Msg {
    /// A new publish, not yet sent.
    pub fn new(publisher: usize, seq: usize) -> Self {
        Msg {
            id: MsgId { publisher, seq },
            packet_id: None,
            dup: false,
        }
    }
}

/// Where the router put a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// c was not in the clients map (or its lane closed): the queue.
    Offline,
    /// c was online but behind(): the queue.
    Behind,
    /// The QoS1 lane.
    Lane,
    /// The lane was full, or its permit did not come in time: handed off to the queue.
    HandOff,
}

/// How a router uses the lane once it decides c is not behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneWait {
    /// `try_send`; a full lane falls back to the queue.
    TrySend,
    /// `timeout(patience, lane.reserve())`; no permit in time falls back to the queue.
    Reserve(Duration),
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub variant: Variant,
    /// c's receive maximum: unacked QoS1 messages in flight at once.
    pub window: usize,
    /// Capacity of the bounded QoS1 lane.
    pub lane_capacity: usize,
    pub lane_wait: LaneWait,
}

impl Config {
    pub fn new(variant: Variant) -> Self {
        Config {
            variant,
            window: 1,
            lane_capacity: 1,
            lane_wait: LaneWait::TrySend,
        }
    }
}

/// A session in the clients map: what a router needs to reach c.
struct Session {
    lane: mpsc::Sender<Msg>,
}

/// The broker's state for c, shared by the handler and the routers.
pub struct Broker<S> {
    config: Config,
    clients: RwLock<BTreeMap<&'static str, Session>>,
    queue: ClientQueue,
    store: S,
    /// Wakes the serve loop: routers after routing, bind when done.
    wake: Notify,
}

/// c's end of a connection: the PUBLISHes the broker sends, and where c's PUBACKs go.
pub struct Connection {
    pub wire: mpsc::Receiver<Msg>,
    pub acks: mpsc::Sender<u16>,
}

impl<S: SessionStore> Broker<S> {
    pub fn new(config: Config, store: S) -> Arc<Self> {
        Arc::new(Broker {
            config,
            clients: RwLock::new(BTreeMap::new()),
            queue: ClientQueue::new(config.variant.guards().behind),
            store,
            wake: Notify::new(),
        })
    }

    /// c connects (clean_start=0) as connection `generation`: its handler, to spawn, and c's
    /// end of the wire.
    pub fn connect(self: &Arc<Self>, generation: u64) -> (ClientHandler<S>, Connection) {
        let (lane_tx, lane_rx) = mpsc::channel(self.config.lane_capacity);
        let (wire_tx, wire_rx) = mpsc::channel(self.config.window);
        let (acks_tx, acks_rx) = mpsc::channel(self.config.window);
        let handler = ClientHandler {
            broker: self.clone(),
            generation,
            lane_tx,
            lane_rx,
            wire: wire_tx,
            acks: acks_rx,
            bound: false,
            inflight: BTreeMap::new(),
            next_packet_id: 1,
        };
        let conn = Connection {
            wire: wire_rx,
            acks: acks_tx,
        };
        (handler, conn)
    }
}

/// The messages a broker restarted with `n` persisted in flight holds: sent, never acked.
pub fn persisted_inflight(n: usize) -> Vec<Msg> {
    (1..=n)
        .map(|seq| Msg {
            id: MsgId { publisher: 0, seq },
            packet_id: Some(seq as u16),
            dup: false,
        })
        .collect()
}

/// What happens around the broker in the restart scenario.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// Concurrent publishers to c's topic.
    pub publishers: usize,
    /// Messages each publisher sends.
    pub messages: usize,
    /// Messages persisted in flight for c at the restart.
    pub inflight: usize,
    /// How long c takes to acknowledge each PUBLISH.
    pub ack_delay: Duration,
    /// How long each publisher waits before each publish.
    pub publish_interval: Duration,
}

impl Workload {
    pub fn new(publishers: usize, messages: usize, inflight: usize) -> Self {
        Workload {
            publishers,
            messages,
            inflight,
            ack_delay: Duration::ZERO,
            publish_interval: Duration::ZERO,
        }
    }
}

/// The restart scenario of the write-up: the broker restarted with `inflight` messages in
/// flight for c and an empty queue; c reconnects while the publishers send. Returns c's log
/// once every message has reached c (a broken rule panics in c's task).
pub async fn restart(config: Config, workload: Workload) -> Arc<Mutex<ClientLog>> {
    let persisted = persisted_inflight(workload.inflight);
    let broker = Broker::new(config, MemStore::with_inflight(persisted.clone()));
    let log = Arc::new(Mutex::new(ClientLog::new(
        workload.publishers * workload.messages,
    )));
    {
        let mut log = log.lock().unwrap();
        log.connect(&persisted);
        log.received_before(&persisted);
    }
    let done = Arc::new(Notify::new());
    let (handler, conn) = broker.connect(1);
    rt::spawn(handler.run());
    for publisher in 1..=workload.publishers {
        let broker = broker.clone();
        let log = log.clone();
        rt::spawn(async move {
            for seq in 1..=workload.messages {
                if !workload.publish_interval.is_zero() {
                    rt::time::sleep(workload.publish_interval).await;
                }
                let route = broker.route(Msg::new(publisher, seq)).await;
                log.lock()
                    .unwrap()
                    .routes
                    .push((MsgId { publisher, seq }, route));
            }
        });
    }
    rt::spawn(
        Client {
            wire: conn.wire,
            acks: conn.acks,
            log: log.clone(),
            done: done.clone(),
            ack_delay: workload.ack_delay,
        }
        .run(),
    );
    done.notified().await;
    log
}
