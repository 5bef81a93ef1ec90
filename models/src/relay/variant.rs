//! The relay's variants, following the fix history of the REQ/CLOSE/same-ID cutovers, and the
//! guards that tell them apart — all in one place.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Before the change: a REQ takes its owner token only when it registers. The read loop
    /// spawns handlers without admission; a refusal retires whatever holds the id.
    RegisterToken,
    /// The token is taken at admission, in the read loop, in arrival order; claims and
    /// refusals are owner-checked. Output is fenced only by cancellation (a select! that wins
    /// at the handler's awaits).
    Admission,
    /// Historical EVENT/EOSE are queued under the lifecycle lock after a lease check.
    HistoricalFence,
    /// Every REQ-scoped frame is fenced, rejections too (the merged change).
    RejectionFence,
    /// Live fan-out also re-checks the subscription generation under the lock before queueing
    /// (the open follow-up).
    GenerationFence,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::RegisterToken,
        Variant::Admission,
        Variant::HistoricalFence,
        Variant::RejectionFence,
        Variant::GenerationFence,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::RegisterToken => "register-token",
            Variant::Admission => "admission",
            Variant::HistoricalFence => "historical-fence",
            Variant::RejectionFence => "rejection-fence",
            Variant::GenerationFence => "generation-fence",
        }
    }

    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn guards(self) -> Guards {
        let admission = self != Variant::RegisterToken;
        Guards {
            token_at_admission: admission,
            historical_fence: matches!(
                self,
                Variant::HistoricalFence | Variant::RejectionFence | Variant::GenerationFence
            ),
            rejection_fence: matches!(self, Variant::RejectionFence | Variant::GenerationFence),
            live_generation_check: self == Variant::GenerationFence,
            close_owner_check: admission,
            live_claim_owner_check: admission,
            eviction_replaced_holder_check: admission,
        }
    }

    /// The guards this variant has for `braid mutants`: the owner checks, in the variants where
    /// every REQ scenario holds (the buggy variants have none to knock out).
    pub fn guard_names(self) -> &'static [&'static str] {
        match self {
            Variant::RejectionFence | Variant::GenerationFence => &GUARDS,
            _ => &[],
        }
    }
}

/// The guards of the fixed variants that `braid mutants` knocks out one at a time.
pub const GUARDS: [&str; 3] = [
    "close-owner-check",
    "live-claim-owner-check",
    "eviction-replaced-holder-check",
];

/// What distinguishes the variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guards {
    /// close::admit runs in the read loop before spawn: the newest request owns the id from
    /// arrival, and the subscription limit counts pending requests.
    pub token_at_admission: bool,
    /// Historical EVENT/EOSE go through send_historical_if_permitted: lease check and queue
    /// insertion under the lifecycle lock.
    pub historical_fence: bool,
    /// Every REQ rejection (NOTICE + CLOSED) goes through close_if_owner, queued in its
    /// critical section. Without it, database-error refusals queue CLOSED directly.
    pub rejection_fence: bool,
    /// Live fan-out re-checks, under the lifecycle lock, that the recipient it snapshotted is
    /// still the registered generation before queueing.
    pub live_generation_check: bool,
    /// close_if_owner acts only for the request that owns the id.
    pub close_owner_check: bool,
    /// The live claim registers only while the request owns its token.
    pub live_claim_owner_check: bool,
    /// An eviction of a holder whose id a newer pending request owns retires only the holder:
    /// no CLOSED, and the pending token stays.
    pub eviction_replaced_holder_check: bool,
}

impl Guards {
    /// Removes the named guard; false if the variant has no such guard.
    pub fn knock_out(&mut self, guard: &str) -> bool {
        let flag = match guard {
            "close-owner-check" => &mut self.close_owner_check,
            "live-claim-owner-check" => &mut self.live_claim_owner_check,
            "eviction-replaced-holder-check" => &mut self.eviction_replaced_holder_check,
            _ => return false,
        };
        let had = *flag;
        *flag = false;
        had
    }
}
