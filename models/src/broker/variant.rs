//! The broker's variants, following the fix history of the bind race, and the guards that tell
//! them apart — all in one place.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// behind() = count > 0 only; no bind flag. The race as found in review.
    Original,
    /// The naive fix, tried and reverted: the lane opens only when the backlog is empty.
    GateLane,
    /// The fix as shipped: expect_bind before register_session, mark_bound after the requeue,
    /// behind() loads count, draining, handoffs, awaiting_bind.
    UnboundBehind,
    /// The same fix with behind() loading awaiting_bind first.
    BoundFirst,
    /// bound-first, and drain_backlog re-checks the lane under the queue's mutex before each
    /// pop: while the lane is non-empty the entry stays at the front and the drain returns, so a
    /// lane message that entered before the entry was queued goes first.
    DrainRechecksLane,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Original,
        Variant::GateLane,
        Variant::UnboundBehind,
        Variant::BoundFirst,
        Variant::DrainRechecksLane,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Original => "original",
            Variant::GateLane => "gate-lane",
            Variant::UnboundBehind => "unbound-behind",
            Variant::BoundFirst => "bound-first",
            Variant::DrainRechecksLane => "drain-rechecks-lane",
        }
    }

    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn guards(self) -> Guards {
        match self {
            Variant::Original => Guards {
                bind_flag: false,
                behind: Behind::CountOnly,
                lane_waits_for_empty_backlog: false,
                drain_rechecks_lane: false,
            },
            Variant::GateLane => Guards {
                bind_flag: false,
                behind: Behind::CountOnly,
                lane_waits_for_empty_backlog: true,
                drain_rechecks_lane: false,
            },
            Variant::UnboundBehind => Guards {
                bind_flag: true,
                behind: Behind::CountFirst,
                lane_waits_for_empty_backlog: false,
                drain_rechecks_lane: false,
            },
            Variant::BoundFirst => Guards {
                bind_flag: true,
                behind: Behind::BindFirst,
                lane_waits_for_empty_backlog: false,
                drain_rechecks_lane: false,
            },
            Variant::DrainRechecksLane => Guards {
                bind_flag: true,
                behind: Behind::BindFirst,
                lane_waits_for_empty_backlog: false,
                drain_rechecks_lane: true,
            },
        }
    }
}

/// The guards of the fixed variants that `braid mutants` knocks out one at a time.
pub const GUARDS: [&str; 2] = ["bind-flag", "drain-lane-recheck"];

impl Variant {
    /// The guards this variant has (the buggy variants have none to knock out).
    pub fn guard_names(self) -> &'static [&'static str] {
        let guards = self.guards();
        match (guards.bind_flag, guards.drain_rechecks_lane) {
            (true, true) => &GUARDS,
            (true, false) => &GUARDS[..1],
            (false, true) => &GUARDS[1..],
            (false, false) => &[],
        }
    }
}

impl Guards {
    /// Removes the named guard; false if the variant has no such guard.
    pub fn knock_out(&mut self, guard: &str) -> bool {
        match guard {
            // Without expect_bind/mark_bound, awaiting_bind stays 0: behind() cannot see that
            // c is unbound.
            "bind-flag" if self.bind_flag => {
                self.bind_flag = false;
                true
            }
            // Without the re-check, drain_backlog looks at the lane only on entry: a lane
            // message that arrives mid-drain is overtaken by its publisher's next message,
            // queued behind `draining` (or handed off by a full lane).
            "drain-lane-recheck" if self.drain_rechecks_lane => {
                self.drain_rechecks_lane = false;
                true
            }
            _ => false,
        }
    }
}

/// What distinguishes the variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guards {
    /// expect_bind(gen) before register_session, mark_bound(gen) once the requeue is done.
    pub bind_flag: bool,
    /// What behind() loads, in which order.
    pub behind: Behind,
    /// The QoS1 lane arm also requires an empty backlog (the reverted naive fix).
    pub lane_waits_for_empty_backlog: bool,
    /// drain_backlog pops an entry only if the lane is empty, checked under the queue's mutex
    /// (in the pop's critical section); otherwise it leaves the entry and returns.
    pub drain_rechecks_lane: bool,
}

/// behind(): separate atomic loads with no lock, short-circuiting in the listed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behind {
    /// count > 0
    CountOnly,
    /// count, draining, handoffs, awaiting_bind
    CountFirst,
    /// awaiting_bind, count, draining, handoffs
    BindFirst,
}
