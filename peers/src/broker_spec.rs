//! What the shuttle and loom versions of the broker's bind race share: the variants, the
//! message ids, and the delivery-order check that panics on a violation (the way shuttle and
//! loom report a failing execution).
//!
//! The thread model itself is `broker_threads.rs`, included by `shuttle_broker.rs` and
//! `loom_broker.rs` over each tool's own Mutex, RwLock, Condvar, atomics and threads, so that
//! both peers run exactly the same code.

use std::collections::BTreeMap;

/// The broker variants of braid's `models/src/broker/variant.rs` that this comparison uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// behind() = count > 0 only; no bind flag (the race as found in review).
    Original,
    /// expect_bind/mark_bound; behind() loads count, draining, handoffs, awaiting_bind.
    UnboundBehind,
    /// The same fix with behind() loading awaiting_bind first.
    BoundFirst,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Original => "original",
            Variant::UnboundBehind => "unbound-behind",
            Variant::BoundFirst => "bound-first",
        }
    }

    /// expect_bind(gen) before register_session, mark_bound(gen) after the requeue.
    pub fn bind_flag(self) -> bool {
        !matches!(self, Variant::Original)
    }
}

/// One model instance: braid's broker scenario parameters, fixed to messages = 1, window = 1,
/// lane_capacity = 1, inflight = 1 (what every broker scenario uses).
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub variant: Variant,
    pub publishers: usize,
}

pub const MESSAGES: usize = 1;
pub const WINDOW: usize = 1;
pub const LANE_CAPACITY: usize = 1;
pub const INFLIGHT: usize = 1;

impl Spec {
    /// Deliveries the handler makes before it stops: the re-sent in-flight messages plus every
    /// published one (nothing lost, nothing duplicated).
    pub fn expected_deliveries(&self) -> usize {
        INFLIGHT + self.publishers * MESSAGES
    }
}

/// `restart#seq` for publisher 0 (in flight at the restart), `pN#seq` otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    pub publisher: usize,
    pub seq: usize,
    pub packet_id: Option<u16>,
    pub dup: bool,
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.publisher == 0 {
            write!(f, "restart#{}", self.seq)?;
        } else {
            write!(f, "p{}#{}", self.publisher, self.seq)?;
        }
        if self.dup {
            write!(f, " (DUP)")?;
        }
        Ok(())
    }
}

/// braid's broker invariants, checked as the handler puts each PUBLISH on the wire:
/// delivery-order (the re-sent in-flight messages precede every newer message, in order; each
/// publisher's messages in publish order) and no-duplicate. nothing-stranded is the handler's
/// stop condition: an execution that strands a message never ends, and the tools report it as
/// a deadlock.
#[derive(Default)]
pub struct DeliveryCheck {
    /// Highest seq delivered per publisher (0 = the in-flight messages).
    last: BTreeMap<usize, usize>,
    pub delivered: usize,
}

impl DeliveryCheck {
    pub fn deliver(&mut self, msg: &Msg) {
        let restarted = self.last.get(&0).copied().unwrap_or(0);
        if msg.publisher != 0 && restarted < INFLIGHT {
            panic!(
                "delivery-order: {msg} delivered before the re-queued in-flight restart#{}",
                restarted + 1
            );
        }
        let last = self.last.entry(msg.publisher).or_insert(0);
        if msg.seq == *last {
            panic!("no-duplicate: {msg} delivered twice");
        }
        if msg.seq != *last + 1 {
            panic!("delivery-order: {msg} delivered after seq {last}");
        }
        *last = msg.seq;
        self.delivered += 1;
    }
}
