//! The client handler task: register_session, bind (requeue persisted in-flight messages), then
//! the serve loop with its QoS1 lane arm and drain_backlog.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use sim::choose;
use sim::sync::{Receiver, Sender};

use super::message::{BrokerEvent, Msg, MsgId};
use super::{Idle, Session, Shared, CLIENT};

pub struct ClientHandler {
    pub shared: Rc<Shared>,
    /// This connection's generation (what expect_bind/mark_bound name).
    pub generation: u64,
    pub lane_tx: Sender<Msg>,
    pub lane_rx: Receiver<Msg>,
    pub wire: Sender<Msg>,
    pub acks: Receiver<u16>,
    /// The client's receive maximum: unacked QoS1 messages allowed in flight.
    pub window: usize,
    pub bound: Cell<bool>,
    pub inflight: RefCell<BTreeMap<u16, MsgId>>,
    pub next_packet_id: Cell<u16>,
    /// How the serve loop waits for work.
    pub idle: Idle,
    /// Messages put on the wire, and how many the workload has (a spin-waiting loop stops
    /// once it has delivered them all, as a connection closes when its work is done).
    pub delivered: Cell<usize>,
    pub expected: usize,
}

/// The two arms of the serve loop's select.
#[derive(Clone, Copy)]
enum Arm {
    Lane,
    Backlog,
}

impl ClientHandler {
    pub async fn run(self) {
        if self.shared.guards.bind_flag {
            self.shared.queue.expect_bind(self.generation).await;
        }
        // The production handler's phases: until bind() is done, routers may see c online
        // while its persisted in-flight messages are not queued yet.
        let phase = sim::mark::phase("register_session..bind");
        self.register_session().await;
        self.bind().await;
        drop(phase);
        self.serve().await;
    }

    /// Inserts c into the clients map: from here on routers see it online.
    async fn register_session(&self) {
        let mut clients = self.shared.clients.write().await;
        clients.insert(
            CLIENT,
            Session {
                lane: self.lane_tx.clone(),
            },
        );
    }

    /// Re-queues the persisted in-flight messages at the front of the queue (DUP, original
    /// packet ids), removes each from storage, and marks the session bound.
    async fn bind(&self) {
        let persisted = self.shared.storage.load_persisted_inflight().await;
        let redeliveries: Vec<Msg> = persisted.iter().map(|m| Msg { dup: true, ..*m }).collect();
        self.shared.queue.requeue_front(&redeliveries).await;
        for msg in &redeliveries {
            self.shared
                .history
                .emit(BrokerEvent::Requeued { id: msg.id });
            sim::mark::enqueued(msg.id);
        }
        for msg in &persisted {
            let packet_id = msg
                .packet_id
                .expect("persisted in-flight messages have packet ids");
            self.shared.storage.remove_inflight(packet_id).await;
        }
        self.bound.set(true);
        if self.shared.guards.bind_flag {
            self.shared.queue.mark_bound(self.generation).await;
        }
        self.shared.wake.notify_one().await;
    }

    async fn serve(&self) {
        loop {
            sim::checkpoint(
                "serve",
                &(
                    self.bound.get(),
                    &*self.inflight.borrow(),
                    self.next_packet_id.get(),
                    self.spin_progress(),
                ),
            );
            self.take_acks().await;
            let lane_ready = self.lane_open().await && !self.lane_rx.is_empty();
            let backlog_ready = self.shared.queue.count().await > 0;
            // The rest of this round depends on which arms are ready, not on the acks taken
            // one by one or the count's exact value.
            sim::checkpoint(
                "ready",
                &(
                    self.bound.get(),
                    &*self.inflight.borrow(),
                    self.next_packet_id.get(),
                    self.spin_progress(),
                    lane_ready,
                    backlog_ready,
                ),
            );
            // select! polls the ready arms from a random start.
            let order = match (lane_ready, backlog_ready) {
                (true, true) if choose(2).await == 0 => [Some(Arm::Lane), Some(Arm::Backlog)],
                (true, true) => [Some(Arm::Backlog), Some(Arm::Lane)],
                (true, false) => [Some(Arm::Lane), None],
                (false, true) => [Some(Arm::Backlog), None],
                (false, false) => [None, None],
            };
            let mut progressed = false;
            for arm in order.into_iter().flatten() {
                progressed = match arm {
                    Arm::Lane => self.lane_arm().await,
                    Arm::Backlog => self.drain_backlog().await,
                };
                if progressed {
                    break;
                }
            }
            if !progressed {
                match self.idle {
                    Idle::Park => self.wait_for_work().await,
                    Idle::BusyPoll => sim::yield_point("poll").await,
                    Idle::SpinWait if self.delivered.get() >= self.expected => return,
                    Idle::SpinWait => sim::yield_now().await,
                }
            }
        }
    }

    /// What the serve loop's future depends on beyond the other locals: the count of
    /// deliveries, when spin-waiting (it decides when the loop ends); nothing when parking.
    fn spin_progress(&self) -> usize {
        match self.idle {
            Idle::SpinWait => self.delivered.get(),
            Idle::Park | Idle::BusyPoll => 0,
        }
    }

    async fn take_acks(&self) {
        while let Some(packet_id) = self.acks.try_recv().await {
            self.inflight.borrow_mut().remove(&packet_id);
        }
    }

    fn window_has_room(&self) -> bool {
        self.inflight.borrow().len() < self.window
    }

    /// The QoS1 lane is open when bound and the outbound window has room (and, in the naive
    /// fix, only while the backlog is empty).
    async fn lane_open(&self) -> bool {
        if !self.bound.get() || !self.window_has_room() {
            return false;
        }
        if self.shared.guards.lane_waits_for_empty_backlog {
            return self.shared.queue.count().await == 0;
        }
        true
    }

    async fn lane_arm(&self) -> bool {
        match self.lane_rx.try_recv().await {
            Some(msg) => {
                self.deliver(msg).await;
                true
            }
            None => false,
        }
    }

    /// Moves backlog entries to the wire while the window has room. Returns early while the lane
    /// is non-empty (so lane traffic goes first); with the re-check, it also stops before any
    /// pop that finds the lane non-empty.
    async fn drain_backlog(&self) -> bool {
        if !self.lane_rx.is_empty() {
            return false;
        }
        let mut progressed = false;
        self.shared.queue.set_draining(true).await;
        while self.window_has_room() {
            let queue = &self.shared.queue;
            let popped = if self.shared.guards.drain_rechecks_lane {
                queue.pop_front_unless(|| !self.lane_rx.is_empty()).await
            } else {
                queue.pop_front().await
            };
            let Some(msg) = popped else {
                break;
            };
            self.shared
                .history
                .emit(BrokerEvent::Drained { id: msg.id });
            self.deliver(msg).await;
            progressed = true;
        }
        self.shared.queue.set_draining(false).await;
        progressed
    }

    async fn deliver(&self, mut msg: Msg) {
        let packet_id = *msg.packet_id.get_or_insert_with(|| {
            let id = self.next_packet_id.get();
            self.next_packet_id.set(id + 1);
            id
        });
        self.inflight.borrow_mut().insert(packet_id, msg.id);
        self.wire.send(msg).await;
        // Before the event: the one that breaks an invariant ends the run.
        sim::mark::on_wire(msg.id);
        self.delivered.set(self.delivered.get() + 1);
        self.shared.history.emit(BrokerEvent::Delivered {
            id: msg.id,
            packet_id,
            dup: msg.dup,
        });
    }

    /// Parks until a router, bind or an ack wakes the loop. Parked with nothing queued is idle;
    /// parked with work queued that no arm can take is stuck.
    async fn wait_for_work(&self) {
        let work_pending = !self.lane_rx.is_empty() || self.shared.queue.has_entries();
        if work_pending {
            self.shared.wake.notified().await;
        } else {
            self.shared.wake.notified_idle().await;
        }
    }
}
