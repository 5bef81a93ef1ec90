// The bind race as threads, written once against `prims` (the including module's choice of
// shuttle or loom types). Included by shuttle_broker.rs and loom_broker.rs.
//
// Scheduling points are what the tool makes them: every lock acquisition, every atomic
// access, condvar waits and notifies, spawn and join. braid's "await" points (a storage round
// trip) are an `AwaitPoint` (threads_sync.rs).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use crate::broker_spec::{DeliveryCheck, Msg, Spec, Variant, INFLIGHT, LANE_CAPACITY, WINDOW};

use prims::{thread, AtomicBool, AtomicU64, AtomicUsize, AwaitPoint, Chan, Mutex, RwLock, Wake};

/// State shared by the handler, the routers and the peer.
struct Shared {
    spec: Spec,
    /// The clients map with one possible client: whether c is registered.
    clients: RwLock<bool>,
    /// The client queue's entries, and the atomics beside them that routers read without a lock.
    entries: Mutex<VecDeque<Msg>>,
    count: AtomicUsize,
    draining: AtomicBool,
    handoffs: AtomicUsize,
    awaiting_bind: AtomicU64,
    lane: Chan<Msg>,
    wire: Chan<Msg>,
    acks: Chan<u16>,
    wake: Wake,
    /// A storage round trip.
    storage_latency: AwaitPoint,
}

impl Shared {
    fn new(spec: Spec) -> Self {
        Shared {
            spec,
            clients: RwLock::new(false),
            entries: Mutex::new(VecDeque::new()),
            count: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            handoffs: AtomicUsize::new(0),
            awaiting_bind: AtomicU64::new(0),
            lane: Chan::new(LANE_CAPACITY),
            wire: Chan::new(WINDOW),
            acks: Chan::new(WINDOW),
            wake: Wake::new(),
            storage_latency: AwaitPoint::new(),
        }
    }

    /// A storage round trip: the task may be descheduled here.
    fn await_point(&self) {
        self.storage_latency.wait();
    }

    fn push_back(&self, msg: Msg) {
        let mut entries = self.entries.lock().unwrap();
        entries.push_back(msg);
        self.count.store(entries.len(), SeqCst);
    }

    fn pop_front(&self) -> Option<Msg> {
        let mut entries = self.entries.lock().unwrap();
        let msg = entries.pop_front();
        self.count.store(entries.len(), SeqCst);
        msg
    }

    /// Separate atomic loads, no lock, short-circuiting in the variant's order.
    fn behind(&self) -> bool {
        match self.spec.variant {
            Variant::Original => self.count.load(SeqCst) > 0,
            Variant::UnboundBehind => {
                self.count.load(SeqCst) > 0
                    || self.draining.load(SeqCst)
                    || self.handoffs.load(SeqCst) > 0
                    || self.awaiting_bind.load(SeqCst) != 0
            }
            Variant::BoundFirst => {
                self.awaiting_bind.load(SeqCst) != 0
                    || self.count.load(SeqCst) > 0
                    || self.draining.load(SeqCst)
                    || self.handoffs.load(SeqCst) > 0
            }
        }
    }
}

/// The client handler: register_session, bind, then the serve loop until every message has
/// been delivered and acknowledged.
struct Handler {
    shared: Arc<Shared>,
    generation: u64,
    /// Persisted outbound in-flight messages (only the handler touches storage).
    storage: Vec<Msg>,
    bound: bool,
    inflight: BTreeMap<u16, (usize, usize)>,
    next_packet_id: u16,
    check: DeliveryCheck,
}

impl Handler {
    fn run(mut self) {
        let sh = self.shared.clone();
        if sh.spec.variant.bind_flag() {
            sh.awaiting_bind.store(self.generation, SeqCst);
        }
        // register_session: from here on routers see c online.
        *sh.clients.write().unwrap() = true;
        self.bind();
        self.serve();
    }

    fn bind(&mut self) {
        let sh = self.shared.clone();
        sh.await_point(); // storage.load_persisted_inflight
        let persisted = self.storage.clone();
        {
            let mut entries = sh.entries.lock().unwrap();
            for msg in persisted.iter().rev() {
                entries.push_front(Msg { dup: true, ..*msg });
            }
            sh.count.store(entries.len(), SeqCst);
        }
        for msg in &persisted {
            sh.await_point(); // storage.remove_inflight
            self.storage.retain(|m| m.packet_id != msg.packet_id);
        }
        self.bound = true;
        if sh.spec.variant.bind_flag() {
            let _ = sh
                .awaiting_bind
                .compare_exchange(self.generation, 0, SeqCst, SeqCst);
        }
        sh.wake.notify_one();
    }

    fn serve(&mut self) {
        let sh = self.shared.clone();
        let expected = sh.spec.expected_deliveries();
        loop {
            while let Some(packet_id) = sh.acks.try_recv() {
                self.inflight.remove(&packet_id);
            }
            if self.check.delivered == expected && self.inflight.is_empty() {
                return;
            }
            // select! over the two arms. When both are ready the lane wins whichever is polled
            // first (drain_backlog returns early while the lane is non-empty), so the arm order
            // braid chooses at random is fixed here to lane first.
            let lane_ready = self.lane_open() && !sh.lane.is_empty();
            let backlog_ready = sh.count.load(SeqCst) > 0;
            let mut progressed = false;
            if lane_ready {
                progressed = self.lane_arm();
            }
            if !progressed && backlog_ready {
                progressed = self.drain_backlog();
            }
            if !progressed {
                sh.wake.notified();
            }
        }
    }

    fn window_has_room(&self) -> bool {
        self.inflight.len() < WINDOW
    }

    fn lane_open(&self) -> bool {
        self.bound && self.window_has_room()
    }

    fn lane_arm(&mut self) -> bool {
        match self.shared.lane.try_recv() {
            Some(msg) => {
                self.deliver(msg);
                true
            }
            None => false,
        }
    }

    fn drain_backlog(&mut self) -> bool {
        let sh = self.shared.clone();
        if !sh.lane.is_empty() {
            return false;
        }
        let mut progressed = false;
        sh.draining.store(true, SeqCst);
        while self.window_has_room() {
            let Some(msg) = sh.pop_front() else {
                break;
            };
            self.deliver(msg);
            progressed = true;
        }
        sh.draining.store(false, SeqCst);
        progressed
    }

    fn deliver(&mut self, mut msg: Msg) {
        let packet_id = *msg.packet_id.get_or_insert_with(|| {
            self.next_packet_id += 1;
            self.next_packet_id - 1
        });
        self.inflight.insert(packet_id, (msg.publisher, msg.seq));
        self.check.deliver(&msg);
        // The window (1) bounds what is unacked, so the wire (capacity = window) has room.
        if self.shared.wire.try_send(msg).is_err() {
            panic!("wire full with the window at {}", self.inflight.len());
        }
    }
}

/// The router of one publisher.
fn router(sh: &Shared, publisher: usize) {
    for seq in 1..=crate::broker_spec::MESSAGES {
        let msg = Msg {
            publisher,
            seq,
            packet_id: None,
            dup: false,
        };
        // Plan under the clients read lock.
        let online = *sh.clients.read().unwrap();
        if !online || sh.behind() {
            sh.push_back(msg);
        } else if let Err(msg) = sh.lane.try_send(msg) {
            // hand_off: the lane is full.
            sh.handoffs.fetch_add(1, SeqCst);
            sh.push_back(msg);
            sh.handoffs.fetch_sub(1, SeqCst);
        }
        sh.wake.notify_one();
    }
}

/// Client c on the wire: takes each PUBLISH and acknowledges it.
fn peer(sh: &Shared) {
    for _ in 0..sh.spec.expected_deliveries() {
        let msg = sh.wire.recv();
        let packet_id = msg
            .packet_id
            .expect("a PUBLISH on the wire has a packet id");
        if sh.acks.try_send(packet_id).is_err() {
            panic!("acks full");
        }
        sh.wake.notify_one();
    }
}

/// One execution: the routers and the peer on their own threads, the handler on this one.
pub fn execution(spec: Spec) {
    let sh = Arc::new(Shared::new(spec));
    let mut threads = Vec::new();
    for publisher in 1..=spec.publishers {
        let sh = sh.clone();
        threads.push(thread::spawn(move || router(&sh, publisher)));
    }
    {
        let sh = sh.clone();
        threads.push(thread::spawn(move || peer(&sh)));
    }
    let storage = (1..=INFLIGHT)
        .map(|seq| Msg {
            publisher: 0,
            seq,
            packet_id: Some(seq as u16),
            dup: false,
        })
        .collect();
    Handler {
        shared: sh,
        generation: 1,
        storage,
        bound: false,
        inflight: BTreeMap::new(),
        next_packet_id: INFLIGHT as u16 + 1,
        check: DeliveryCheck::default(),
    }
    .run();
    for t in threads {
        t.join().unwrap();
    }
}
