//! The broker's variants, following the fix history of the bind race, and the guards that
//! tell them apart — all in one place (the same as the model's, models/src/broker/variant.rs).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// behind() = count > 0 only; no bind flag. The race as found in review (the model's
    /// `original`).
    BindRace,
    /// The naive fix, tried and reverted: the lane opens only when the backlog is empty.
    GateLane,
    /// The fix as shipped: expect_bind before register_session, mark_bound after the requeue,
    /// behind() loads count, draining, handoffs, awaiting_bind.
    UnboundBehind,
    /// The same fix with behind() loading awaiting_bind first.
    BoundFirst,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::BindRace,
        Variant::GateLane,
        Variant::UnboundBehind,
        Variant::BoundFirst,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::BindRace => "bind-race",
            Variant::GateLane => "gate-lane",
            Variant::UnboundBehind => "unbound-behind",
            Variant::BoundFirst => "bound-first",
        }
    }

    /// The model's name for the same variant (`models::registry::build("broker", ..)`).
    pub fn model_name(self) -> &'static str {
        match self {
            Variant::BindRace => "original",
            other => other.name(),
        }
    }

    pub fn guards(self) -> Guards {
        let (bind_flag, behind, lane_waits_for_empty_backlog) = match self {
            Variant::BindRace => (false, Behind::CountOnly, false),
            Variant::GateLane => (false, Behind::CountOnly, true),
            Variant::UnboundBehind => (true, Behind::CountFirst, false),
            Variant::BoundFirst => (true, Behind::BindFirst, false),
        };
        Guards {
            bind_flag,
            behind,
            lane_waits_for_empty_backlog,
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
