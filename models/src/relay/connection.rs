//! One connection's state: the subscription map with owner tokens behind the lifecycle lock
//! (`pending_subscriptions`), the relay's registry and fan-out index, the subscription gauge,
//! the outbound queue, and the helpers every path uses to change them.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use sim::sync::{Mutex, MutexGuard, Sender, Shared as SharedCell, TrySendError};
use sim::History;

use super::frame::{Action, Channel, Frame, FrameKind, RelayEvent, SubId};
use super::variant::Guards;
use crate::pubsub::PubSub;

/// This connection's id in the relay's connection map.
pub const CONN: &str = "conn";

/// A request's lease: its token, and the cancellation its handler's select! watches.
pub struct Lease {
    pub req: Action,
    pub sub: SubId,
    pub channel: Channel,
    pub cancelled: SharedCell<bool>,
    /// Ghost: the request still counts as pending work (for the subscription limit). Settled by
    /// its handler without the lock and by cancellation under it: a recorded cell.
    pub pending_work: SharedCell<bool>,
}

impl Lease {
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.with(|c| *c)
    }
}

/// The subscription map's entry for one sub id.
pub struct Entry {
    /// The owner token: the newest admitted request (register-token: the registered holder).
    pub owner: Action,
    /// The registered holder.
    pub holder: Option<Rc<Lease>>,
    /// Admitted requests that have not claimed yet (the rest of the lineage).
    pub pending: Vec<Rc<Lease>>,
}

/// A subscription in the relay's registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Registration {
    pub req: Action,
    pub channel: Channel,
}

/// Plain state, read by invariants at quiescence. The subscription map, the gauge and the
/// connection map are only touched while holding the lifecycle lock; what other tasks read
/// without it (registry, fan-out index, the closed flag) is in recorded `Shared` cells. No borrow
/// is ever held across an await.
pub struct State {
    /// The relay's connection map.
    pub connections: RefCell<BTreeSet<&'static str>>,
    /// The connection's subscription map (`pending_subscriptions`).
    pub subs: RefCell<BTreeMap<SubId, Entry>>,
    /// The subscription registry: (connection, sub id) -> subscription.
    pub registry: SharedCell<BTreeMap<SubId, Registration>>,
    /// The fan-out index: channel -> subscriptions to deliver live events to.
    pub fanout: SharedCell<BTreeMap<Channel, BTreeSet<(SubId, Action)>>>,
    /// The subscription gauge.
    pub gauge: Cell<i64>,
    /// Set under the lifecycle lock by disconnect.
    pub closed: SharedCell<bool>,
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl State {
    /// Creates the state (inside a run: accesses to its shared cells are recorded).
    pub fn new() -> Self {
        State {
            connections: RefCell::new(BTreeSet::new()),
            subs: RefCell::new(BTreeMap::new()),
            registry: SharedCell::new("registry", BTreeMap::new()),
            fanout: SharedCell::new("fanout-index", BTreeMap::new()),
            gauge: Cell::new(0),
            closed: SharedCell::new("conn.closed", false),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.with(|c| *c)
    }

    /// The generation registered for `sub`, if any.
    pub fn registered(&self, sub: SubId) -> Option<Action> {
        self.registry.with(|r| r.get(sub).map(|r| r.req))
    }

    /// The subscriptions the fan-out index lists for `channel`.
    pub fn recipients(&self, channel: Channel) -> Vec<(SubId, Action)> {
        self.fanout.with(|f| {
            f.get(channel)
                .map(|set| set.iter().copied().collect())
                .unwrap_or_default()
        })
    }

    pub fn owner(&self, sub: SubId) -> Option<Action> {
        self.subs.borrow().get(sub).map(|e| e.owner)
    }

    pub fn holder(&self, sub: SubId) -> Option<Rc<Lease>> {
        self.subs.borrow().get(sub).and_then(|e| e.holder.clone())
    }
}

/// Everything the connection's tasks share.
pub struct Shared {
    pub state: Rc<State>,
    /// The connection's lifecycle lock (the `pending_subscriptions` mutex).
    pub lifecycle: Mutex<()>,
    pub out: Sender<Frame>,
    pub pubsub: PubSub,
    pub guards: Guards,
    pub limit: usize,
    pub history: History<RelayEvent>,
}

impl Shared {
    pub fn emit(&self, e: RelayEvent) {
        self.history.emit(e);
    }

    pub fn new_lease(&self, req: Action, sub: SubId, channel: Channel) -> Rc<Lease> {
        self.emit(RelayEvent::Work {
            sub,
            req,
            live: true,
        });
        Rc::new(Lease {
            req,
            sub,
            channel,
            // A shared cell is never the object of a scheduling point, so its name shows in no
            // trace: a literal, rather than a name formatted per request on every run.
            cancelled: SharedCell::new("lease.cancelled", false),
            pending_work: SharedCell::new("lease.pending", true),
        })
    }

    /// The request is no longer pending work (it registered, was refused or is gone).
    pub fn settle(&self, lease: &Lease) {
        if lease.pending_work.with_mut(|w| std::mem::replace(w, false)) {
            self.emit(RelayEvent::Work {
                sub: lease.sub,
                req: lease.req,
                live: false,
            });
        }
    }

    /// Cancels a lease: its handler's select! may now take the cancellation branch.
    pub fn cancel(&self, lease: &Lease) {
        lease.cancelled.with_mut(|c| *c = true);
        self.settle(lease);
    }

    /// Refuses `req` for the subscription limit: records where it took effect, releases the
    /// lifecycle lock, and queues CLOSED "error: too many subscriptions".
    pub async fn refuse_over_limit(
        &self,
        lifecycle: MutexGuard<'_, ()>,
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
        })
        .await;
    }

    /// conn.send: queue a frame (synchronous try_send; dropped once the connection is gone).
    pub async fn send(&self, frame: Frame) {
        if self.state.is_closed() {
            return;
        }
        match self.out.try_send(frame).await {
            Ok(()) => self.emit(RelayEvent::Queued(frame)),
            Err(TrySendError::Full(frame)) => self.emit(RelayEvent::Overflow(frame)),
        }
    }

    /// Registers `lease` in the registry and fan-out index. Caller holds the lifecycle lock.
    pub fn register(&self, lease: &Lease) {
        let s = &self.state;
        let had = s.registry.with_mut(|r| {
            r.insert(
                lease.sub,
                Registration {
                    req: lease.req,
                    channel: lease.channel,
                },
            )
            .is_some()
        });
        s.fanout.with_mut(|f| {
            f.entry(lease.channel)
                .or_default()
                .insert((lease.sub, lease.req))
        });
        if !had {
            s.gauge.set(s.gauge.get() + 1);
        }
        self.emit(RelayEvent::Registered {
            sub: lease.sub,
            req: lease.req,
            channel: lease.channel,
        });
    }

    /// Removes `lease`'s registration (if the registry still maps its id to it) and its fan-out
    /// entry, and releases its topic. Caller holds the lifecycle lock.
    pub async fn unregister(&self, lease: &Lease) {
        let s = &self.state;
        let removed = s.registry.with_mut(|registry| {
            let mine = registry.get(lease.sub).is_some_and(|r| r.req == lease.req);
            if mine {
                registry.remove(lease.sub);
            }
            mine
        });
        if removed {
            s.gauge.set(s.gauge.get() - 1);
        }
        s.fanout.with_mut(|fanout| {
            if let Some(set) = fanout.get_mut(lease.channel) {
                set.remove(&(lease.sub, lease.req));
                if set.is_empty() {
                    fanout.remove(lease.channel);
                }
            }
        });
        self.emit(RelayEvent::Unregistered {
            sub: lease.sub,
            req: lease.req,
            channel: lease.channel,
        });
        self.pubsub.release_topic(lease.channel).await;
    }

    /// Cancels and removes the whole lineage of `sub`: its pending requests and its registered
    /// holder. Caller holds the lifecycle lock.
    pub async fn retire_lineage(&self, sub: SubId) {
        let Some(entry) = self.state.subs.borrow_mut().remove(sub) else {
            return;
        };
        for lease in &entry.pending {
            self.cancel(lease);
        }
        if let Some(holder) = &entry.holder {
            self.cancel(holder);
            self.unregister(holder).await;
        }
    }

    /// Whether `lease` is still the registered generation of its id (not replaced, closed,
    /// evicted or disconnected). Caller holds the lifecycle lock.
    pub fn is_current(&self, lease: &Lease) -> bool {
        !self.state.is_closed()
            && !lease.is_cancelled()
            && self
                .state
                .holder(lease.sub)
                .is_some_and(|h| h.req == lease.req)
    }

    /// send_historical_if_permitted: the lease check and the queue insertion under one hold of
    /// the lifecycle lock. False if the lease is no longer current (nothing queued).
    pub async fn send_if_current(&self, lease: &Lease, frame: Frame) -> bool {
        let _lifecycle = self.lifecycle.lock().await;
        if !self.is_current(lease) {
            return false;
        }
        self.send(frame).await;
        true
    }

    /// close_if_owner: if `lease` owns its id, retire the lineage and queue `frames` in the same
    /// critical section. Returns whether it owned the id.
    pub async fn close_if_owner(&self, lease: &Lease, frames: &[Frame]) -> bool {
        let _lifecycle = self.lifecycle.lock().await;
        if self.state.is_closed() {
            return false;
        }
        let owns = self.state.owner(lease.sub) == Some(lease.req);
        if !owns && self.guards.close_owner_check {
            return false;
        }
        self.retire_lineage(lease.sub).await;
        self.cancel(lease);
        self.emit(RelayEvent::TookEffect {
            sub: lease.sub,
            action: lease.req,
            how: "refused: lineage retired",
        });
        for frame in frames {
            self.send(*frame).await;
        }
        true
    }
}
