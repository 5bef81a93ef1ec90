//! braid's relay invariants (models/src/relay/properties.rs) for the shuttle and loom relay:
//! the same checks on the same events, at the same moments — a frame is judged as it enters
//! the outbound queue, against ghost facts (which request a frame belongs to, when each client
//! action took effect) — and the same end-state checks once the run is over. Checked in braid's
//! order; the first broken one is the run's failure, `<invariant>: <message>`.
//!
//! The same-ID script never disconnects, so the checks of a closed connection are left out.

use std::collections::{BTreeMap, BTreeSet};

use models::relay::{Action, Channel, Frame, FrameKind, RelayEvent, SubId};

use crate::relay_spec::CONN;

/// The relay's state once the run is over.
pub struct End {
    pub connections: BTreeSet<&'static str>,
    /// The subscription map: per id, the holder and the requests still pending.
    pub subs: BTreeMap<SubId, (Option<Action>, Vec<Action>)>,
    pub registry: BTreeMap<SubId, (Action, Channel)>,
    pub fanout: BTreeMap<Channel, BTreeSet<(SubId, Action)>>,
    pub gauge: i64,
    pub refcounts: BTreeMap<Channel, usize>,
    pub subscribed: BTreeSet<Channel>,
}

/// Every invariant's state over one run.
pub struct Invariants {
    no_stale_frame: NoStaleFrame,
    newest_owns: NewestOwns,
    single_terminal: SingleTerminal,
    subscription_limit: SubscriptionLimit,
}

impl Invariants {
    pub fn new(limit: usize) -> Self {
        Invariants {
            no_stale_frame: NoStaleFrame::default(),
            newest_owns: NewestOwns::default(),
            single_terminal: SingleTerminal::default(),
            subscription_limit: SubscriptionLimit {
                limit,
                pending: BTreeMap::new(),
                registered: BTreeMap::new(),
            },
        }
    }

    pub fn observe(&mut self, e: &RelayEvent) -> Result<(), String> {
        named("no-stale-frame", self.no_stale_frame.observe(e))?;
        named("newest-owns", self.newest_owns.observe(e))?;
        named("single-terminal", self.single_terminal.observe(e))?;
        named("subscription-limit", self.subscription_limit.observe(e))
    }

    pub fn at_quiescence(&self, end: &End) -> Result<(), String> {
        named("newest-owns", self.newest_owns.at_quiescence())?;
        named("integrity", integrity(end))?;
        named("retained-subscribed", retained_subscribed(end))
    }
}

fn named(name: &str, r: Result<(), String>) -> Result<(), String> {
    r.map_err(|m| format!("{name}: {m}"))
}

fn newer(map: &mut BTreeMap<SubId, Action>, sub: SubId, action: Action) {
    let slot = map.entry(sub).or_insert(action);
    if action.seq > slot.seq {
        *slot = action;
    }
}

/// No frame for x from a request older than a REQ x or CLOSE x that has taken effect; no
/// rejection from a request older than the newest REQ x or CLOSE x the read loop has taken.
#[derive(Default)]
struct NoStaleFrame {
    effective: BTreeMap<SubId, (Action, &'static str)>,
    arrived: BTreeMap<SubId, Action>,
}

impl NoStaleFrame {
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

/// No REQ x takes effect once a newer REQ x has arrived; at the end the newest REQ x has been
/// answered and x is held by nothing older than the newest frame on it.
#[derive(Default)]
struct NewestOwns {
    newest_req: BTreeMap<SubId, Action>,
    newest: BTreeMap<SubId, Action>,
    holder: BTreeMap<SubId, Action>,
    answered: BTreeSet<Action>,
}

impl NewestOwns {
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
            _ => {}
        }
        Ok(())
    }

    fn at_quiescence(&self) -> Result<(), String> {
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

/// At most one CLOSED per request, and nothing from it after that.
#[derive(Default)]
struct SingleTerminal {
    terminal: BTreeMap<Action, Frame>,
}

impl SingleTerminal {
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

/// Sub ids with a registered subscription or a pending request never exceed the limit.
struct SubscriptionLimit {
    limit: usize,
    pending: BTreeMap<SubId, BTreeSet<Action>>,
    registered: BTreeMap<SubId, Action>,
}

impl SubscriptionLimit {
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
        // Counted without building the set, as braid's model does (the same cost on both
        // sides of the comparison).
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
            let list: Vec<String> = ids.iter().map(|sub| sub.to_string()).collect();
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

/// The connection map, subscription map, registry, fan-out index, topic refcounts and gauge
/// agree.
fn integrity(end: &End) -> Result<(), String> {
    let show_registry = || {
        let regs: Vec<String> = end
            .registry
            .iter()
            .map(|(sub, (req, channel))| format!("{sub} -> {req} on {channel}"))
            .collect();
        format!("[{}]", regs.join(", "))
    };
    if !end.connections.contains(CONN) {
        return Err("the open connection left the connection map".into());
    }
    for (sub, (holder, pending)) in &end.subs {
        if !pending.is_empty() {
            let reqs: Vec<String> = pending.iter().map(|r| r.to_string()).collect();
            return Err(format!(
                "pending map: {sub} keeps tokens of finished requests {}",
                reqs.join(", ")
            ));
        }
        match holder {
            None => return Err(format!("pending map: {sub} has an entry but no holder")),
            Some(h) if end.registry.get(sub).map(|r| r.0) != Some(*h) => {
                return Err(format!(
                    "pending map: {sub} held by {h}, registry {}",
                    show_registry()
                ))
            }
            Some(_) => {}
        }
    }
    if let Some(sub) = end.registry.keys().find(|sub| !end.subs.contains_key(*sub)) {
        return Err(format!(
            "registry: {sub} registered but not in the pending map"
        ));
    }
    let mut expected_fanout: BTreeMap<Channel, BTreeSet<(SubId, Action)>> = BTreeMap::new();
    let mut expected_refs: BTreeMap<Channel, usize> = BTreeMap::new();
    for (sub, (req, channel)) in &end.registry {
        expected_fanout
            .entry(channel)
            .or_default()
            .insert((*sub, *req));
        *expected_refs.entry(channel).or_default() += 1;
    }
    if end.fanout != expected_fanout {
        return Err(format!(
            "fan-out index {:?} differs from the registry {}",
            end.fanout,
            show_registry()
        ));
    }
    if end.refcounts != expected_refs {
        return Err(format!(
            "topic refcounts {:?} differ from the registry's channels {expected_refs:?}",
            end.refcounts
        ));
    }
    if end.gauge != end.registry.len() as i64 {
        return Err(format!(
            "gauge {} but {} registered subscriptions",
            end.gauge,
            end.registry.len()
        ));
    }
    Ok(())
}

/// Every retained topic is subscribed (else its events are lost).
fn retained_subscribed(end: &End) -> Result<(), String> {
    let missing: Vec<String> = end
        .refcounts
        .iter()
        .filter(|(t, _)| !end.subscribed.contains(*t))
        .map(|(t, n)| format!("{t} (refcount {n})"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "retained but never subscribed, its events lost: {}",
            missing.join(", ")
        ))
    }
}
