//! The client handler task: register_session, bind (re-queue the persisted in-flight
//! messages), then the serve loop: a `select!` over the acks, the QoS1 lane, the backlog and
//! the wake-up, until c's connection ends.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::rt::sync::mpsc::{Receiver, Sender};
use super::{rt, Broker, Msg, MsgId, Session, SessionStore, CLIENT};

pub struct ClientHandler<S> {
    pub(super) broker: Arc<Broker<S>>,
    /// This connection's generation (what expect_bind/mark_bound name).
    pub(super) generation: u64,
    pub(super) lane_tx: Sender<Msg>,
    pub(super) lane_rx: Receiver<Msg>,
    pub(super) wire: Sender<Msg>,
    pub(super) acks: Receiver<u16>,
    pub(super) bound: bool,
    /// Unacknowledged QoS1 messages on the wire, by packet id.
    pub(super) inflight: BTreeMap<u16, MsgId>,
    pub(super) next_packet_id: u16,
}

impl<S: SessionStore> ClientHandler<S> {
    pub async fn run(mut self) {
        let guards = self.broker.config.variant.guards();
        if guards.bind_flag {
            self.broker.queue.expect_bind(self.generation);
        }
        self.register_session().await;
        self.bind().await;
        self.serve().await;
    }

    /// Inserts the client into the clients map: from here on routers see it online.
    async fn register_session(&self) {
        let mut clients = self.broker.clients.write().await;
        clients.insert(
            CLIENT,
            Session {
                lane: self.lane_tx.clone(),
            },
        );
    }

    /// Re-queues the persisted in-flight messages at the front of the queue (DUP, original
    /// packet ids), removes each from storage, and marks the session bound.
    async fn bind(&mut self) {
        let store = &self.broker.store;
        let persisted = store.load_persisted_inflight().await;
        let redeliveries: Vec<Msg> = persisted.iter().map(|m| Msg { dup: true, ..*m }).collect();
        self.broker.queue.requeue_front(&redeliveries).await;
        for msg in &persisted {
            let packet_id = msg.packet_id.expect("a message in flight has a packet id");
            self.next_packet_id = self.next_packet_id.max(packet_id + 1);
            store.remove_inflight(packet_id).await;
        }
        self.bound = true;
        if self.broker.config.variant.guards().bind_flag {
            self.broker.queue.mark_bound(self.generation);
        }
        self.broker.wake.notify_one();
    }

    async fn serve(&mut self) {
        loop {
            let lane_open = self.lane_open();
            // drain_backlog only runs when it can move something: the window has room and the
            // lane (whose traffic goes first) is empty.
            let backlog_ready =
                self.window_has_room() && self.lane_rx.is_empty() && self.broker.queue.count() > 0;
            rt::select! {
                ack = self.acks.recv() => match ack {
                    Some(packet_id) => self.puback(packet_id).await,
                    // c's connection ended (it failed, or c took its session over from a new
                    // one): this handler is done.
                    None => return self.hand_back_lane().await,
                },
                Some(msg) = self.lane_rx.recv(), if lane_open => self.deliver(msg).await,
                _ = std::future::ready(()), if backlog_ready => self.drain_backlog().await,
                _ = self.broker.wake.notified() => {}
            }
        }
    }

    /// The connection is gone: routers stop using its lane, and what they put there goes to
    /// the front of the queue for the next connection. Older than anything queued since (a
    /// router takes the lane only while c is not behind), newer than what bind re-queues.
    async fn hand_back_lane(&mut self) {
        self.lane_rx.close();
        let mut laned = Vec::new();
        while let Some(msg) = self.lane_rx.recv().await {
            laned.push(msg);
        }
        if !laned.is_empty() {
            self.broker.queue.requeue_front(&laned).await;
        }
    }

    fn window_has_room(&self) -> bool {
        self.inflight.len() < self.broker.config.window
    }

    /// The QoS1 lane is open when bound and the outbound window has room (and, in the naive
    /// fix, only while the backlog is empty).
    fn lane_open(&self) -> bool {
        if !self.bound || !self.window_has_room() {
            return false;
        }
        if self
            .broker
            .config
            .variant
            .guards()
            .lane_waits_for_empty_backlog
        {
            return self.broker.queue.count() == 0;
        }
        true
    }

    /// Moves backlog entries to the wire while the window has room. Returns early while the
    /// lane is non-empty, so lane traffic goes first.
    async fn drain_backlog(&mut self) {
        if !self.lane_rx.is_empty() {
            return;
        }
        let queue = &self.broker.queue;
        queue.set_draining(true);
        while self.window_has_room() {
            let Some(msg) = self.broker.queue.pop_front().await else {
                break;
            };
            self.deliver(msg).await;
        }
        self.broker.queue.set_draining(false);
    }

    /// Persists the message in flight, then puts it on the wire.
    async fn deliver(&mut self, mut msg: Msg) {
        let packet_id = *msg.packet_id.get_or_insert_with(|| {
            let id = self.next_packet_id;
            self.next_packet_id += 1;
            id
        });
        self.inflight.insert(packet_id, msg.id);
        self.broker.store.persist_inflight(msg).await;
        // A client that went away takes its unacked messages with it: they stay persisted.
        let _ = self.wire.send(msg).await;
    }

    async fn puback(&mut self, packet_id: u16) {
        if self.inflight.remove(&packet_id).is_some() {
            self.broker.store.remove_inflight(packet_id).await;
        }
    }
}
