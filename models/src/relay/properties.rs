//! The relay's invariants. They judge frames at the moment they enter the outbound queue (the
//! queue is FIFO with one writer, so that moment fixes their place on the wire), against ghost
//! facts: which request lineage a frame belongs to, and when each client action took effect.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use sim::invariant::Invariant;

use super::connection::{Registration, State, CONN};
use super::frame::{Action, Channel, Frame, FrameKind, RelayEvent, SubId};
use crate::pubsub::{RetainedSubscribed, TopicState};

/// The properties every run must have.
///
/// - `no-stale-frame`: no frame for x from a request older than a REQ x or CLOSE x that has
///   taken effect (committed, refused and retired the lineage, or closed it); and no rejection
///   (NOTICE, CLOSED) from a request older than the newest REQ x or CLOSE x the read loop has
///   taken — the client could not tell it from the newer request failing.
/// - `newest-owns`: no REQ x takes effect once a newer REQ x has arrived; at quiescence the
///   newest REQ x has been answered (EOSE or CLOSED) and x is held by nothing older than the
///   newest frame on it.
/// - `single-terminal`: at most one CLOSED per request, and nothing from it after that.
/// - `subscription-limit`: sub ids with a registered subscription or a pending request never
///   exceed the limit.
/// - `integrity`: at quiescence the connection map, subscription map, registry, fan-out index,
///   topic refcounts and gauge agree — and after disconnect they are all empty/zero.
/// - `retained-subscribed`: at quiescence every retained topic is subscribed.
///
/// Deadlock is the engine's own check.
pub fn invariants(
    limit: usize,
    state: Rc<State>,
    topics: Rc<TopicState>,
) -> Vec<Box<dyn Invariant<RelayEvent>>> {
    vec![
        Box::new(NoStaleFrame::default()),
        Box::new(NewestOwns::default()),
        Box::new(SingleTerminal::default()),
        Box::new(SubscriptionLimit {
            limit,
            pending: BTreeMap::new(),
            registered: BTreeMap::new(),
        }),
        Box::new(Integrity {
            state,
            topics: topics.clone(),
        }),
        Box::new(RetainedSubscribed { state: topics }),
    ]
}

fn newer(map: &mut BTreeMap<SubId, Action>, sub: SubId, action: Action) {
    let slot = map.entry(sub).or_insert(action);
    if action.seq > slot.seq {
        *slot = action;
    }
}

#[derive(Default)]
struct NoStaleFrame {
    /// Per id, the newest action that has taken effect, and how.
    effective: BTreeMap<SubId, (Action, &'static str)>,
    /// Per id, the newest action the read loop has taken.
    arrived: BTreeMap<SubId, Action>,
}

impl Invariant<RelayEvent> for NoStaleFrame {
    fn name(&self) -> &str {
        "no-stale-frame"
    }

    fn observe(&mut self, event: &RelayEvent) -> Result<(), String> {
        match *event {
            RelayEvent::Arrived { sub, action } => newer(&mut self.arrived, sub, action),
            RelayEvent::TookEffect { sub, action, how } => {
                let slot = self.effective.entry(sub).or_insert((action, how));
                if action.seq > slot.0.seq {
                    *slot = (action, how);
                }
            }
            RelayEvent::Queued(frame) => {
                if let Some(&(effective, how)) = self.effective.get(frame.sub) {
                    if effective.seq > frame.from.seq {
                        return Err(format!(
                            "{frame} queued after {effective} took effect on {} ({how})",
                            frame.sub
                        ));
                    }
                }
                if let Some(&arrived) = self.arrived.get(frame.sub) {
                    if frame.is_rejection() && frame.from.is_req() && arrived.seq > frame.from.seq {
                        let why = if arrived.is_req() {
                            format!("the client cannot tell it from {arrived} failing")
                        } else {
                            format!("the client already closed {}", frame.sub)
                        };
                        return Err(format!(
                            "{frame} queued after the newer {arrived} on {} arrived: {why}",
                            frame.sub
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[derive(Default)]
struct NewestOwns {
    newest_req: BTreeMap<SubId, Action>,
    newest: BTreeMap<SubId, Action>,
    holder: BTreeMap<SubId, Action>,
    answered: BTreeSet<Action>,
    disconnected: bool,
}

impl Invariant<RelayEvent> for NewestOwns {
    fn name(&self) -> &str {
        "newest-owns"
    }

    fn observe(&mut self, event: &RelayEvent) -> Result<(), String> {
        match *event {
            RelayEvent::Arrived { sub, action } => {
                newer(&mut self.newest, sub, action);
                if action.is_req() {
                    newer(&mut self.newest_req, sub, action);
                }
            }
            RelayEvent::TookEffect { sub, action, how } if action.is_req() => {
                if let Some(&newest) = self.newest_req.get(sub) {
                    if newest.seq > action.seq {
                        return Err(format!(
                            "{action} took effect on {sub} ({how}) after the newer {newest} \
                             arrived: an older REQ {sub} displaced the newer one"
                        ));
                    }
                }
            }
            RelayEvent::Registered { sub, req, .. } => {
                self.holder.insert(sub, req);
            }
            RelayEvent::Unregistered { sub, req, .. } if self.holder.get(sub) == Some(&req) => {
                self.holder.remove(sub);
            }
            RelayEvent::Queued(Frame {
                kind: FrameKind::Eose | FrameKind::Closed(_),
                from,
                ..
            }) => {
                self.answered.insert(from);
            }
            RelayEvent::Disconnected => self.disconnected = true,
            _ => {}
        }
        Ok(())
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        if self.disconnected {
            return Ok(());
        }
        for (&sub, &newest) in &self.newest {
            if newest.is_req() && !self.answered.contains(&newest) {
                return Err(format!(
                    "the newest REQ {sub} ({newest}) was never answered: no EOSE, no CLOSED"
                ));
            }
            if let Some(&holder) = self.holder.get(sub) {
                if holder != newest {
                    return Err(format!(
                        "{sub} is registered to {holder}, but the newest frame on it is {newest}"
                    ));
                }
            }
        }
        Ok(())
    }
}

#[derive(Default)]
struct SingleTerminal {
    terminal: BTreeMap<Action, Frame>,
}

impl Invariant<RelayEvent> for SingleTerminal {
    fn name(&self) -> &str {
        "single-terminal"
    }

    fn observe(&mut self, event: &RelayEvent) -> Result<(), String> {
        if let RelayEvent::Queued(frame) = *event {
            if let Some(terminal) = self.terminal.get(&frame.from) {
                return Err(format!(
                    "{frame} queued after {}'s terminal {terminal}",
                    frame.from
                ));
            }
            if frame.is_terminal() {
                self.terminal.insert(frame.from, frame);
            }
        }
        Ok(())
    }
}

struct SubscriptionLimit {
    limit: usize,
    pending: BTreeMap<SubId, BTreeSet<Action>>,
    registered: BTreeMap<SubId, Action>,
}

impl Invariant<RelayEvent> for SubscriptionLimit {
    fn name(&self) -> &str {
        "subscription-limit"
    }

    fn observe(&mut self, event: &RelayEvent) -> Result<(), String> {
        match *event {
            RelayEvent::Work { sub, req, live } => {
                let set = self.pending.entry(sub).or_default();
                if live {
                    set.insert(req);
                } else {
                    set.remove(&req);
                    if set.is_empty() {
                        self.pending.remove(sub);
                    }
                }
            }
            RelayEvent::Registered { sub, req, .. } => {
                self.registered.insert(sub, req);
            }
            RelayEvent::Unregistered { sub, req, .. } => {
                if self.registered.get(sub) == Some(&req) {
                    self.registered.remove(sub);
                }
            }
            _ => return Ok(()),
        }
        // Counted without building the set: this runs on every lifecycle event of every run.
        let held = self.pending.len()
            + self
                .registered
                .keys()
                .filter(|sub| !self.pending.contains_key(*sub))
                .count();
        if held > self.limit {
            let ids: BTreeSet<SubId> = self
                .pending
                .keys()
                .chain(self.registered.keys())
                .copied()
                .collect();
            let list: Vec<String> = ids
                .iter()
                .map(
                    |sub| match (self.registered.get(sub), self.pending.get(sub)) {
                        (Some(r), _) => format!("{sub} (registered to {r})"),
                        (None, Some(p)) => {
                            let reqs: Vec<String> = p.iter().map(|a| a.to_string()).collect();
                            format!("{sub} (pending {})", reqs.join(", "))
                        }
                        (None, None) => sub.to_string(),
                    },
                )
                .collect();
            return Err(format!(
                "{} subscription ids held or pending at once, over the limit {}: {}",
                ids.len(),
                self.limit,
                list.join("; ")
            ));
        }
        Ok(())
    }
}

struct Integrity {
    state: Rc<State>,
    topics: Rc<TopicState>,
}

impl Invariant<RelayEvent> for Integrity {
    fn name(&self) -> &str {
        "integrity"
    }

    fn observe(&mut self, _event: &RelayEvent) -> Result<(), String> {
        Ok(())
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        let s = &self.state;
        // Read in place, not cloned: this runs at the end of every run.
        s.registry.with(|registry| {
            s.fanout.with(|fanout| {
                self.topics
                    .refcounts
                    .with(|refcounts| integrity(s, registry, fanout, refcounts))
            })
        })
    }
}

/// The relay's bookkeeping agrees with itself at quiescence (see `Integrity`).
fn integrity(
    s: &State,
    registry: &BTreeMap<SubId, Registration>,
    fanout: &BTreeMap<Channel, BTreeSet<(SubId, Action)>>,
    refcounts: &BTreeMap<Channel, usize>,
) -> Result<(), String> {
    let subs = s.subs.borrow();
    let connections = s.connections.borrow();
    let gauge = s.gauge.get();
    let show_registry = || {
        let regs: Vec<String> = registry
            .iter()
            .map(|(sub, r)| format!("{sub} -> {} on {}", r.req, r.channel))
            .collect();
        format!("[{}]", regs.join(", "))
    };
    let show_fanout = || {
        let entries: Vec<String> = fanout
            .iter()
            .flat_map(|(c, set)| set.iter().map(move |(sub, r)| format!("{c}: {sub}/{r}")))
            .collect();
        format!("[{}]", entries.join(", "))
    };
    if s.is_closed() {
        let mut left = Vec::new();
        if !connections.is_empty() {
            left.push(format!("connection map {connections:?}"));
        }
        if !subs.is_empty() {
            left.push(format!("pending map {:?}", subs.keys().collect::<Vec<_>>()));
        }
        if !registry.is_empty() {
            left.push(format!("registry {}", show_registry()));
        }
        if !fanout.is_empty() {
            left.push(format!("fan-out index {}", show_fanout()));
        }
        if !refcounts.is_empty() {
            left.push(format!("topic refcounts {refcounts:?}"));
        }
        if gauge != 0 {
            left.push(format!("gauge {gauge}"));
        }
        return if left.is_empty() {
            Ok(())
        } else {
            Err(format!("after disconnect: {}", left.join("; ")))
        };
    }
    if !connections.contains(CONN) {
        return Err("the open connection left the connection map".into());
    }
    for (sub, entry) in subs.iter() {
        if !entry.pending.is_empty() {
            let reqs: Vec<String> = entry.pending.iter().map(|l| l.req.to_string()).collect();
            return Err(format!(
                "pending map: {sub} keeps tokens of finished requests {}",
                reqs.join(", ")
            ));
        }
        match &entry.holder {
            None => return Err(format!("pending map: {sub} has an entry but no holder")),
            Some(h) if registry.get(sub).map(|r| r.req) != Some(h.req) => {
                return Err(format!(
                    "pending map: {sub} held by {}, registry {}",
                    h.req,
                    show_registry()
                ))
            }
            Some(_) => {}
        }
    }
    if let Some(sub) = registry.keys().find(|sub| !subs.contains_key(*sub)) {
        return Err(format!(
            "registry: {sub} registered but not in the pending map"
        ));
    }
    let mut expected_fanout: BTreeMap<Channel, BTreeSet<(SubId, Action)>> = BTreeMap::new();
    let mut expected_refs: BTreeMap<Channel, usize> = BTreeMap::new();
    for (sub, r) in registry.iter() {
        expected_fanout
            .entry(r.channel)
            .or_default()
            .insert((*sub, r.req));
        *expected_refs.entry(r.channel).or_default() += 1;
    }
    if *fanout != expected_fanout {
        return Err(format!(
            "fan-out index {} differs from the registry {}",
            show_fanout(),
            show_registry()
        ));
    }
    if *refcounts != expected_refs {
        return Err(format!(
            "topic refcounts {refcounts:?} differ from the registry's channels {expected_refs:?}"
        ));
    }
    if gauge != registry.len() as i64 {
        return Err(format!(
            "gauge {gauge} but {} registered subscriptions",
            registry.len()
        ));
    }
    Ok(())
}
