//! Client c on the other end of the wire: checks what it receives against MQTT's ordering
//! rules (a failed check panics, as a test assertion does), and acknowledges each PUBLISH.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::rt::sync::mpsc::{Receiver, Sender};
use super::rt::sync::Notify;
use super::{rt, Msg, MsgId, Route};

/// What c has received, and what it is still owed.
#[derive(Debug, Default)]
pub struct ClientLog {
    /// Messages the broker holds in flight for c at this connection (sent before, unacked):
    /// each must be re-sent, DUP, in its original order, before any newer message.
    owed: VecDeque<MsgId>,
    /// Messages c has received, first deliveries and DUP resends alike.
    seen: BTreeSet<MsgId>,
    /// Per publisher, the sequence number of its latest first delivery.
    last_first: BTreeMap<usize, usize>,
    /// First deliveries still to come at quiescence.
    pub expected: usize,
    /// Every PUBLISH, in wire order.
    pub wire: Vec<Msg>,
    /// Where the routers put each message (ghost: the client cannot see it).
    pub routes: Vec<(MsgId, Route)>,
    /// Messages the broker took responsibility for (ghost): persisted in flight, so sent or
    /// about to be. A publisher whose broker restarted re-sends only the others.
    taken: BTreeSet<MsgId>,
    /// What each connection generation's bind re-queued (ghost, from the store).
    binds: BTreeMap<u64, Vec<Msg>>,
    /// The generation of the connection c last read a PUBLISH on.
    reading: u64,
}

impl ClientLog {
    /// A log expecting `expected` first deliveries.
    pub fn new(expected: usize) -> Self {
        ClientLog {
            expected,
            ..ClientLog::default()
        }
    }

    /// c connects (again): the broker holds `inflight` for it, sent before and unacked. Sent,
    /// not necessarily received: a crash can drop a message persisted in flight before c read
    /// it off the wire, and then its DUP resend is the first c sees of it. What an earlier
    /// connection still owed stays owed, after these (bind re-queues these in front of it).
    pub fn connect(&mut self, inflight: &[Msg]) {
        let still_owed: Vec<MsgId> = self
            .owed
            .iter()
            .filter(|id| !inflight.iter().any(|m| m.id == **id))
            .copied()
            .collect();
        self.owed = inflight.iter().map(|m| m.id).chain(still_owed).collect();
    }

    /// The bind of connection `generation` re-queued `inflight` (ghost: c cannot see it).
    pub fn bound(&mut self, generation: u64, inflight: &[Msg]) {
        self.binds.insert(generation, inflight.to_vec());
    }

    /// c reads its first PUBLISH on connection `generation` (its CONNACK's): c is owed what
    /// its bind re-queued, and what the binds since c's previous connection did (connections
    /// c had given up on, which took the session over on the way: their re-queued messages
    /// are still to come). Only then: until this connection was bound, c read what the
    /// previous one had been sent.
    pub fn reading_connection(&mut self, generation: u64) {
        assert!(
            self.binds.contains_key(&generation),
            "c reads a PUBLISH of connection {generation}, which has not bound"
        );
        let since: Vec<Vec<Msg>> = self
            .binds
            .range(self.reading + 1..)
            .take_while(|(g, _)| **g <= generation)
            .map(|(_, inflight)| inflight.clone())
            .collect();
        for inflight in since {
            self.connect(&inflight);
        }
        self.reading = generation;
    }

    /// The broker took responsibility for these messages (see `taken`).
    pub fn took(&mut self, msgs: &[Msg]) {
        self.taken.extend(msgs.iter().map(|m| m.id));
    }

    /// Whether the broker took responsibility for `id`.
    pub fn has_taken(&self, id: MsgId) -> bool {
        self.taken.contains(&id)
    }

    /// Messages the broker took responsibility for that c has not received.
    pub fn undelivered(&self) -> Vec<MsgId> {
        self.taken
            .iter()
            .filter(|id| !self.seen.contains(id))
            .copied()
            .collect()
    }

    /// c received `msgs` in an earlier session (the restart scenario's pre-seeded state).
    pub fn received_before(&mut self, msgs: &[Msg]) {
        self.seen.extend(msgs.iter().map(|m| m.id));
    }

    /// Checks one PUBLISH: MQTT-4.4.0-1 / MQTT-4.6.0-5 (re-sent messages first and in order,
    /// then per-publisher order), and no duplicate beyond a DUP resend.
    pub fn on_publish(&mut self, msg: &Msg) {
        self.wire.push(*msg);
        if msg.dup {
            if let Some(pos) = self.owed.iter().position(|id| *id == msg.id) {
                assert!(
                    pos == 0,
                    "delivery-order: DUP resend {} before the older {}",
                    msg.id,
                    self.owed[0]
                );
                self.owed.pop_front();
            } else {
                assert!(
                    self.seen.contains(&msg.id),
                    "no-duplicate: DUP {} was never sent",
                    msg.id
                );
            }
            if self.seen.insert(msg.id) {
                // The resend of a message c never received is its first delivery.
                self.count_first_delivery();
            }
            return;
        }
        if let Some(older) = self.owed.front() {
            panic!(
                "delivery-order: newer message {} delivered before the re-queued older {} \
                 (MQTT-4.4.0-1)",
                msg.id, older
            );
        }
        assert!(
            self.seen.insert(msg.id),
            "no-duplicate: {} delivered twice",
            msg.id
        );
        let last = self.last_first.entry(msg.id.publisher).or_default();
        assert!(
            msg.id.seq > *last,
            "delivery-order: p{}#{} delivered after p{}#{}",
            msg.id.publisher,
            msg.id.seq,
            msg.id.publisher,
            *last
        );
        *last = msg.id.seq;
        self.count_first_delivery();
    }

    fn count_first_delivery(&mut self) {
        self.expected = self
            .expected
            .checked_sub(1)
            .expect("no more first deliveries than published");
    }

    /// Nothing owed and every expected message delivered.
    pub fn complete(&self) -> bool {
        self.owed.is_empty() && self.expected == 0
    }
}

/// c's connection: receives PUBLISHes, checks them, acknowledges them.
pub struct Client {
    pub wire: Receiver<Msg>,
    pub acks: Sender<u16>,
    pub log: Arc<Mutex<ClientLog>>,
    /// Notified once the log is complete.
    pub done: Arc<Notify>,
    /// How long c takes to acknowledge each PUBLISH.
    pub ack_delay: Duration,
}

impl Client {
    pub async fn run(mut self) {
        // A reconnection may find c's log complete already: the connection that received the
        // last message died (a crash) between acknowledging it and saying so.
        if self.log.lock().unwrap().complete() {
            self.done.notify_one();
        }
        while let Some(msg) = self.wire.recv().await {
            let complete = {
                let mut log = self.log.lock().unwrap();
                log.on_publish(&msg);
                log.complete()
            };
            if !self.ack_delay.is_zero() {
                rt::time::sleep(self.ack_delay).await;
            }
            let packet_id = msg
                .packet_id
                .expect("a PUBLISH on the wire has a packet id");
            if self.acks.send(packet_id).await.is_err() {
                return;
            }
            if complete {
                self.done.notify_one();
            }
        }
    }
}
