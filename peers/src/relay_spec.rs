//! What the shuttle and loom versions of the relay's same-ID replacement share: the scenario
//! they run (braid's own scenario file, so that braid and the peers run one set of parameters),
//! the variant's guards and the client's frames.
//!
//! The vocabulary is braid's, from `models::relay`: the variants and their guards, actions,
//! frames and the events the invariants judge. It is plain data (no braid machinery); the model
//! itself is `relay_threads.rs`, included by `shuttle_relay.rs` and `loom_relay.rs` over each
//! tool's primitives, and the invariants are `relay_invariants.rs`.

use models::relay::{Access, Action, Channel, Guards, Params, Script, SubId, Variant};

/// One model instance: a variant of braid's relay with the parameters of a same-ID scenario.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub guards: Guards,
    /// Stored events each REQ's historical query returns.
    pub stored: usize,
    /// The per-connection subscription limit.
    pub limit: usize,
    /// Capacity of the bounded outbound queue.
    pub outbound: usize,
    /// Capacity of the pubsub subscriber's command queue.
    pub pubsub_queue: usize,
}

impl Spec {
    /// The spec of a braid relay scenario, if the thread model covers it: the same-id script,
    /// access checks that pass, no disconnect.
    pub fn from_scenario(variant: &str, params: &serde_json::Value) -> Result<Spec, String> {
        let variant =
            Variant::parse(variant).ok_or_else(|| format!("unknown relay variant {variant}"))?;
        let p: Params = serde_json::from_value(params.clone()).map_err(|e| e.to_string())?;
        p.validate()?;
        if p.script != Script::SameId || p.access != Access::Ok || p.disconnect {
            return Err(format!(
                "the thread model is the same-id script with access ok and no disconnect, \
                 not {p:?}"
            ));
        }
        Ok(Spec {
            guards: variant.guards(),
            stored: p.stored,
            limit: p.limit,
            outbound: p.outbound,
            pubsub_queue: p.pubsub_queue,
        })
    }
}

/// The client's frames, in arrival order: REQ x (r1, channel c1), then the same-ID REQ x (r2,
/// channel c2).
pub fn frames() -> [(Action, SubId, Channel); 2] {
    [(Action::req(1), "x", "c1"), (Action::req(2), "x", "c2")]
}

/// What each REQ's historical query returns (the first `stored`).
pub const STORED: [&str; 3] = ["stored#1", "stored#2", "stored#3"];

/// This connection's id in the relay's connection map.
pub const CONN: &str = "conn";
