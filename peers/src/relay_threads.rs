// The relay's same-ID replacement as threads (braid's models/src/relay/ on the same-id script),
// written once against `prims` (the including module's choice of shuttle or loom types).
// Included by shuttle_relay.rs and loom_relay.rs.
//
// The same tasks: the read loop (here on the execution's own thread), one handler thread per
// REQ, the writer and the pubsub subscriber. The same scheduling points, one tool operation for
// each of braid's: an await (`AwaitPoint::wait`), a lock of the lifecycle mutex, each op on the
// outbound and command channels (`Chan`), each notify and wait on the subscriber's wake-up
// (`Wake`), a `choose` (`AwaitPoint::choose`). braid's plain shared state (its `Shared` cells:
// lease cancellation and pending work, topic refcounts, subscriptions, the reconcile flag, the
// event history) is `Recorded`: no scheduling point, and an access the tool's reduction sees.
// State braid touches only under the lifecycle lock is inside the lifecycle mutex.
//
// Where the threads differ: the subscriber's look at its command queue (a plain read in braid)
// takes the queue's lock, as the broker's lane check does; a tool's mutex and condvar are
// several of its points each (shuttle also switches at unlock and notify); and threads must
// end, so once the handlers are joined the harness closes the outbound queue and stops the
// idle subscriber (in braid the run ends with both idle).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use models::pubsub::{Command, PubSubEvent};
use models::relay::{Action, Channel, Frame, FrameKind, RelayEvent, SubId};

use crate::relay_invariants::{End, Invariants};
use crate::relay_spec::{frames, Spec, CONN, STORED};

use prims::{thread, AwaitPoint, Chan, Mutex, Recorded, Wake};

/// A request's lease: its token, and the cancellation its handler's select! watches.
struct Lease {
    req: Action,
    sub: SubId,
    channel: Channel,
    cancelled: Recorded<bool>,
    /// Ghost: the request still counts as pending work (for the subscription limit).
    pending_work: Recorded<bool>,
}

/// The subscription map's entry for one sub id.
struct Entry {
    /// The owner token: the newest admitted request (register-token: the registered holder).
    owner: Action,
    holder: Option<Arc<Lease>>,
    /// Admitted requests that have not claimed yet.
    pending: Vec<Arc<Lease>>,
}

/// What the lifecycle lock (`pending_subscriptions`) guards. braid keeps the registry and the
/// fan-out index in recorded cells because its live fan-out and eviction read them without the
/// lock; the same-ID script has neither, so every access to them is under the lock.
struct Lifecycle {
    connections: BTreeSet<&'static str>,
    subs: BTreeMap<SubId, Entry>,
    registry: BTreeMap<SubId, (Action, Channel)>,
    fanout: BTreeMap<Channel, BTreeSet<(SubId, Action)>>,
    gauge: i64,
}

impl Lifecycle {
    fn owner(&self, sub: SubId) -> Option<Action> {
        self.subs.get(sub).map(|e| e.owner)
    }

    fn holder(&self, sub: SubId) -> Option<&Arc<Lease>> {
        self.subs.get(sub).and_then(|e| e.holder.as_ref())
    }
}

/// The pubsub layer on its fixed variant (coalesced-reconcile), as the relay model runs it.
struct PubSub {
    refcounts: Recorded<BTreeMap<Channel, usize>>,
    subscribed: Recorded<BTreeSet<Channel>>,
    /// The coalesced reconcile wake-up.
    reconcile: Recorded<bool>,
    commands: Chan<Command>,
    wake: Wake,
    /// The harness's shutdown: no retain or release can follow, the subscriber may stop when
    /// idle (in braid, a run simply ends with it idle).
    stop: Recorded<bool>,
}

/// Everything the connection's threads share.
struct Conn {
    spec: Spec,
    lifecycle: Mutex<Lifecycle>,
    out: Chan<Frame>,
    pubsub: PubSub,
    /// Every round trip (websocket read, database, redis).
    latency: AwaitPoint,
    /// The event history and the invariants that judge it.
    history: Recorded<Invariants>,
}

impl Conn {
    fn new(spec: Spec) -> Self {
        Conn {
            spec,
            lifecycle: Mutex::new(Lifecycle {
                connections: BTreeSet::from([CONN]),
                subs: BTreeMap::new(),
                registry: BTreeMap::new(),
                fanout: BTreeMap::new(),
                gauge: 0,
            }),
            out: Chan::new(spec.outbound),
            pubsub: PubSub {
                refcounts: Recorded::new(BTreeMap::new()),
                subscribed: Recorded::new(BTreeSet::new()),
                reconcile: Recorded::new(false),
                commands: Chan::new(spec.pubsub_queue),
                wake: Wake::new(),
                stop: Recorded::new(false),
            },
            latency: AwaitPoint::new(),
            history: Recorded::new(Invariants::new(spec.limit)),
        }
    }

    /// Records `e` (every event braid's model records, the ones no invariant reads included:
    /// each is an access braid's reduction sees); a broken invariant fails the execution.
    fn emit(&self, e: RelayEvent) {
        if let Err(violation) = self.history.with_mut(|h| h.observe(&e)) {
            panic!("{violation}");
        }
    }

    fn new_lease(&self, req: Action, sub: SubId, channel: Channel) -> Arc<Lease> {
        self.emit(RelayEvent::Work {
            sub,
            req,
            live: true,
        });
        Arc::new(Lease {
            req,
            sub,
            channel,
            cancelled: Recorded::new(false),
            pending_work: Recorded::new(true),
        })
    }

    /// The request is no longer pending work.
    fn settle(&self, lease: &Lease) {
        if lease.pending_work.with_mut(|w| std::mem::replace(w, false)) {
            self.emit(RelayEvent::Work {
                sub: lease.sub,
                req: lease.req,
                live: false,
            });
        }
    }

    /// Cancels a lease: its handler's select! may now take the cancellation branch.
    fn cancel(&self, lease: &Lease) {
        lease.cancelled.with_mut(|c| *c = true);
        self.settle(lease);
    }

    fn is_cancelled(&self, lease: &Lease) -> bool {
        lease.cancelled.with(|c| *c)
    }

    /// Refuses `req` for the subscription limit: releases the lock, queues CLOSED.
    fn refuse_over_limit(
        &self,
        lifecycle: prims::MutexGuard<'_, Lifecycle>,
        sub: SubId,
        req: Action,
        how: &'static str,
    ) {
        self.emit(RelayEvent::TookEffect {
            sub,
            action: req,
            how,
        });
        drop(lifecycle);
        self.send(Frame {
            sub,
            kind: FrameKind::Closed("error: too many subscriptions"),
            from: req,
        });
    }

    /// conn.send: a try_send on the outbound queue (the connection never closes here).
    fn send(&self, frame: Frame) {
        let queued = self
            .out
            .try_send_with(frame, |f| self.emit(RelayEvent::Queued(*f)));
        if let Err(frame) = queued {
            self.emit(RelayEvent::Overflow(frame));
        }
    }

    /// Registers `lease` in the registry and fan-out index.
    fn register(&self, lc: &mut Lifecycle, lease: &Lease) {
        let had = lc
            .registry
            .insert(lease.sub, (lease.req, lease.channel))
            .is_some();
        lc.fanout
            .entry(lease.channel)
            .or_default()
            .insert((lease.sub, lease.req));
        if !had {
            lc.gauge += 1;
        }
        self.emit(RelayEvent::Registered {
            sub: lease.sub,
            req: lease.req,
            channel: lease.channel,
        });
    }

    /// Removes `lease`'s registration (if still its own) and fan-out entry, releases its topic.
    fn unregister(&self, lc: &mut Lifecycle, lease: &Lease) {
        let mine = lc.registry.get(lease.sub).is_some_and(|r| r.0 == lease.req);
        if mine {
            lc.registry.remove(lease.sub);
            lc.gauge -= 1;
        }
        if let Some(set) = lc.fanout.get_mut(lease.channel) {
            set.remove(&(lease.sub, lease.req));
            if set.is_empty() {
                lc.fanout.remove(lease.channel);
            }
        }
        self.emit(RelayEvent::Unregistered {
            sub: lease.sub,
            req: lease.req,
            channel: lease.channel,
        });
        self.release_topic(lease.channel);
    }

    /// Whether `lease` is still the registered generation of its id. Caller holds the lock.
    fn is_current(&self, lc: &Lifecycle, lease: &Lease) -> bool {
        !self.is_cancelled(lease) && lc.holder(lease.sub).is_some_and(|h| h.req == lease.req)
    }

    /// send_historical_if_permitted: lease check and queue insertion under one hold of the lock.
    fn send_if_current(&self, lease: &Lease, frame: Frame) -> bool {
        let lc = self.lifecycle.lock().unwrap();
        if !self.is_current(&lc, lease) {
            return false;
        }
        self.send(frame);
        true
    }

    fn retain_topic(&self, topic: Channel) {
        let count = self.pubsub.refcounts.with_mut(|refcounts| {
            let n = refcounts.entry(topic).or_insert(0);
            *n += 1;
            *n
        });
        self.emit(RelayEvent::PubSub(PubSubEvent::Retained { topic, count }));
        if count == 1 {
            self.hint(Command::Subscribe(topic));
        }
    }

    fn release_topic(&self, topic: Channel) {
        let count = self.pubsub.refcounts.with_mut(|refcounts| {
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
        self.emit(RelayEvent::PubSub(PubSubEvent::Released { topic, count }));
        if count == 0 {
            self.hint(Command::Unsubscribe(topic));
        }
    }

    /// try_send the hint; a full queue leaves the coalesced reconcile wake-up instead.
    fn hint(&self, cmd: Command) {
        let p = &self.pubsub;
        if p.commands.try_send(cmd).is_ok() {
            self.emit(RelayEvent::PubSub(PubSubEvent::HintQueued(cmd)));
        } else {
            self.emit(RelayEvent::PubSub(PubSubEvent::HintDropped(cmd)));
            p.reconcile.with_mut(|r| *r = true);
            self.emit(RelayEvent::PubSub(PubSubEvent::ReconcileScheduled));
        }
        p.wake.notify_one();
    }

    /// The state once every thread is done, for the end-state checks.
    fn end(&self) -> End {
        let lc = self.lifecycle.lock().unwrap();
        End {
            connections: lc.connections.clone(),
            subs: lc
                .subs
                .iter()
                .map(|(sub, e)| {
                    let holder = e.holder.as_ref().map(|h| h.req);
                    (*sub, (holder, e.pending.iter().map(|p| p.req).collect()))
                })
                .collect(),
            registry: lc.registry.clone(),
            fanout: lc.fanout.clone(),
            gauge: lc.gauge,
            refcounts: self.pubsub.refcounts.with(|r| r.clone()),
            subscribed: self.pubsub.subscribed.with(|s| s.clone()),
        }
    }
}

/// The read loop: each REQ in arrival order (admitted first in the later variants), its handler
/// spawned.
fn read_loop(c: &Arc<Conn>) -> Vec<thread::JoinHandle<()>> {
    let mut handlers = Vec::new();
    for (req, sub, channel) in frames() {
        c.latency.wait(); // ws: read frame
        let lease = if c.spec.guards.token_at_admission {
            admit(c, req, sub, channel)
        } else {
            c.emit(RelayEvent::Arrived { sub, action: req });
            Some(c.new_lease(req, sub, channel))
        };
        if let Some(lease) = lease {
            let c = c.clone();
            handlers.push(thread::spawn(move || handle_req(&c, &lease)));
        }
    }
    handlers
}

/// close::admit: the request's token becomes the owner of its id; the limit counts pending
/// requests. None: refused here, no handler.
fn admit(c: &Conn, req: Action, sub: SubId, channel: Channel) -> Option<Arc<Lease>> {
    let mut lc = c.lifecycle.lock().unwrap();
    c.emit(RelayEvent::Arrived { sub, action: req });
    let full = !lc.subs.contains_key(sub) && lc.subs.len() >= c.spec.limit;
    if full {
        let how = "refused at admission: too many subscriptions";
        c.refuse_over_limit(lc, sub, req, how);
        return None;
    }
    let lease = c.new_lease(req, sub, channel);
    let entry = lc.subs.entry(sub).or_insert_with(|| Entry {
        owner: req,
        holder: None,
        pending: Vec::new(),
    });
    entry.owner = req;
    entry.pending.push(lease.clone());
    Some(lease)
}

/// handle_req: the access checks (they pass), then claim and the history.
fn handle_req(c: &Conn, lease: &Arc<Lease>) {
    c.latency.wait(); // db: channel access
    if !cancellation_wins(c, lease) && claim(c, lease) {
        deliver_history(c, lease);
    }
    c.settle(lease);
}

/// After an await: if the lease was cancelled meanwhile, select! picks the cancellation branch
/// (0) or, the awaited future being ready too, the handler's branch (1).
fn cancellation_wins(c: &Conn, lease: &Lease) -> bool {
    c.is_cancelled(lease) && c.latency.choose(2) == 0
}

/// claim: under the lifecycle lock, register, retain the topic, replace the old holder, commit
/// (cancel the predecessors). False if the request may not claim.
fn claim(c: &Conn, lease: &Arc<Lease>) -> bool {
    let mut lc = c.lifecycle.lock().unwrap();
    let (sub, req) = (lease.sub, lease.req);
    let g = c.spec.guards;
    if g.token_at_admission {
        let owns = lc.owner(sub) == Some(req);
        if !owns && g.live_claim_owner_check {
            return false;
        }
    } else {
        // The limit is checked here, over registered subscriptions only.
        let full = !lc.registry.contains_key(sub) && lc.registry.len() >= c.spec.limit;
        if full {
            let how = "refused at registration: too many subscriptions";
            c.refuse_over_limit(lc, sub, req, how);
            return false;
        }
    }
    let old = {
        let entry = lc.subs.entry(sub).or_insert_with(|| Entry {
            owner: req,
            holder: None,
            pending: Vec::new(),
        });
        if !g.token_at_admission {
            // register-token: the token is taken now.
            entry.owner = req;
        }
        entry.holder.take()
    };
    c.register(&mut lc, lease);
    c.retain_topic(lease.channel);
    if let Some(old) = old {
        c.cancel(&old);
        c.unregister(&mut lc, &old);
    }
    // pending.commit(): this request holds the id; older pending requests are cancelled.
    let predecessors: Vec<Arc<Lease>> = {
        let entry = lc
            .subs
            .get_mut(sub)
            .expect("entry present under the lifecycle lock");
        entry.holder = Some(lease.clone());
        let (older, newer): (Vec<_>, Vec<_>) = entry.pending.drain(..).partition(|p| p.req <= req);
        entry.pending = newer;
        older
    };
    for p in predecessors.iter().filter(|p| p.req != req) {
        c.cancel(p);
    }
    c.emit(RelayEvent::TookEffect {
        sub,
        action: req,
        how: "committed: registered",
    });
    c.settle(lease);
    true
}

/// The historical query, then its EVENTs and EOSE, fenced or not.
fn deliver_history(c: &Conn, lease: &Lease) {
    c.latency.wait(); // db: historical query
    if cancellation_wins(c, lease) {
        return;
    }
    let events = STORED[..c.spec.stored].iter().map(|&l| FrameKind::Event(l));
    for kind in events.chain([FrameKind::Eose]) {
        let frame = Frame {
            sub: lease.sub,
            kind,
            from: lease.req,
        };
        if c.spec.guards.historical_fence {
            if !c.send_if_current(lease, frame) {
                return;
            }
        } else {
            c.send(frame);
        }
    }
}

/// The writer: takes frames off the outbound queue (onto the wire) until the harness closes it.
fn writer(c: &Conn) {
    while let Some(frame) = c.out.recv_or_closed() {
        c.emit(RelayEvent::Wire(frame));
    }
}

#[derive(Clone, Copy)]
enum Arm {
    Command,
    Reconcile,
}

/// The subscriber: a select! over its command queue and the coalesced reconcile wake-up.
fn subscriber(c: &Conn) {
    let p = &c.pubsub;
    loop {
        // Read before the arms: once set, every hint is already queued or flagged.
        let stopping = p.stop.with(|s| *s);
        let mut ready = Vec::with_capacity(2);
        if !p.commands.is_empty() {
            ready.push(Arm::Command);
        }
        if p.reconcile.with(|r| *r) {
            ready.push(Arm::Reconcile);
        }
        let arm = match ready.len() {
            0 => {
                if stopping {
                    return;
                }
                p.wake.notified();
                continue;
            }
            1 => ready[0],
            n => ready[c.latency.choose(n)],
        };
        match arm {
            Arm::Command => {
                if let Some(cmd) = p.commands.try_recv() {
                    apply(c, cmd);
                }
            }
            Arm::Reconcile => reconcile(c),
        }
    }
}

/// A hint applied against the desired state.
fn apply(c: &Conn, cmd: Command) {
    let p = &c.pubsub;
    let refcount = |t: Channel| p.refcounts.with(|r| r.get(t).copied().unwrap_or(0));
    let is_subscribed = |t: Channel| p.subscribed.with(|s| s.contains(t));
    match cmd {
        Command::Subscribe(t) => {
            if refcount(t) > 0 && !is_subscribed(t) {
                subscribe(c, t);
            }
        }
        Command::Unsubscribe(t) => {
            if refcount(t) == 0 && is_subscribed(t) {
                unsubscribe(c, t);
            }
        }
    }
}

/// The reconcile arm: subscribe every retained topic the link is missing, unsubscribe every
/// topic no longer retained.
fn reconcile(c: &Conn) {
    let p = &c.pubsub;
    p.reconcile.with_mut(|r| *r = false);
    c.emit(RelayEvent::PubSub(PubSubEvent::Reconciling));
    let subscribed = p.subscribed.with(|s| s.clone());
    let missing: Vec<Channel> = p.refcounts.with(|r| {
        r.keys()
            .filter(|t| !subscribed.contains(*t))
            .copied()
            .collect()
    });
    for t in missing {
        subscribe(c, t);
    }
    let retained: BTreeSet<Channel> = p.refcounts.with(|r| r.keys().copied().collect());
    let released: Vec<Channel> = p.subscribed.with(|s| {
        s.iter()
            .filter(|t| !retained.contains(*t))
            .copied()
            .collect()
    });
    for t in released {
        unsubscribe(c, t);
    }
}

fn subscribe(c: &Conn, t: Channel) {
    c.latency.wait(); // redis SUBSCRIBE
    c.pubsub.subscribed.with_mut(|s| s.insert(t));
    c.emit(RelayEvent::PubSub(PubSubEvent::Subscribed(t)));
}

fn unsubscribe(c: &Conn, t: Channel) {
    c.latency.wait(); // redis UNSUBSCRIBE
    c.pubsub.subscribed.with_mut(|s| s.remove(t));
    c.emit(RelayEvent::PubSub(PubSubEvent::Unsubscribed(t)));
}

/// One execution: the writer and the subscriber on their own threads, the read loop on this
/// one, then — every handler done — the shutdown the idle servers need, and the end checks.
pub fn execution(spec: Spec) {
    let c = Arc::new(Conn::new(spec));
    let writer = {
        let c = c.clone();
        thread::spawn(move || writer(&c))
    };
    let subscriber = {
        let c = c.clone();
        thread::spawn(move || subscriber(&c))
    };
    for handler in read_loop(&c) {
        handler.join().unwrap();
    }
    c.out.close();
    c.pubsub.stop.with_mut(|s| *s = true);
    c.pubsub.wake.notify_one();
    writer.join().unwrap();
    subscriber.join().unwrap();
    let end = c.end();
    if let Err(violation) = c.history.with(|h| h.at_quiescence(&end)) {
        panic!("{violation}");
    }
}
