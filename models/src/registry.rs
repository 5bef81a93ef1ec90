//! Models by name: what exists, and how to build one from a variant name and parameters.

use sim::Model;
use thiserror::Error;

use crate::{broker, pubsub, relay};

#[derive(Debug, Error)]
pub enum BuildError {
    #[error("unknown model '{name}' (known: {known})")]
    UnknownModel { name: String, known: String },
    #[error("unknown variant '{variant}' of model '{model}' (known: {known})")]
    UnknownVariant {
        model: String,
        variant: String,
        known: String,
    },
    #[error("variant '{variant}' of model '{model}' has no guard '{guard}' (guards: {known})")]
    UnknownGuard {
        model: String,
        variant: String,
        guard: String,
        known: String,
    },
    #[error("bad parameters for model '{model}': {message}")]
    BadParams { model: String, message: String },
    #[error("model '{model}' has no invariant '{invariant}' (its invariants: {known})")]
    UnknownInvariant {
        model: String,
        invariant: String,
        known: String,
    },
}

/// The invariants the engine itself checks on every model.
pub const ENGINE_INVARIANTS: [&str; 4] = ["deadlock", "livelock", "panic", "step-bound"];

/// The invariants `model` checks (its own, then the engine's), or `None` for an unknown model.
pub fn invariants(model: &str) -> Option<Vec<&'static str>> {
    let own: &[&str] = match model {
        "broker" => &["delivery-order", "no-duplicate", "nothing-stranded"],
        "relay" => &[
            "no-stale-frame",
            "newest-owns",
            "single-terminal",
            "subscription-limit",
            "integrity",
        ],
        "pubsub" => &["retained-subscribed", "integrity"],
        _ => return None,
    };
    Some(own.iter().chain(&ENGINE_INVARIANTS).copied().collect())
}

/// Checks that every invariant a scenario expects to be violated is one `model` checks: an
/// expectation no run can meet (a typo) must not wait for a run to say so.
pub fn check_expected(model: &str, expected: &sim::scenario::Expected) -> Result<(), BuildError> {
    let sim::scenario::Expected::Violation(names) = expected else {
        return Ok(());
    };
    let known = invariants(model).ok_or_else(|| BuildError::UnknownModel {
        name: model.to_string(),
        known: catalog()
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    match names.iter().find(|n| !known.contains(&n.as_str())) {
        None => Ok(()),
        Some(bad) => Err(BuildError::UnknownInvariant {
            model: model.to_string(),
            invariant: bad.clone(),
            known: known.join(", "),
        }),
    }
}

/// A model and its variants, for `braid list`.
pub struct ModelInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub variants: Vec<&'static str>,
}

pub fn catalog() -> Vec<ModelInfo> {
    vec![
        ModelInfo {
            name: "broker",
            summary: "MQTT v5 broker: QoS1 backlog and lane, the reconnect/bind race",
            variants: broker::Variant::ALL.iter().map(|v| v.name()).collect(),
        },
        ModelInfo {
            name: "relay",
            summary: "Nostr relay connection: REQ/CLOSE/same-ID replacement cutovers, live fan-out",
            variants: relay::Variant::ALL.iter().map(|v| v.name()).collect(),
        },
        ModelInfo {
            name: "pubsub",
            summary: "Topic retain/release with a bounded subscriber command queue",
            variants: pubsub::Variant::ALL.iter().map(|v| v.name()).collect(),
        },
    ]
}

/// Builds `model` in `variant` with `params` (a JSON object; absent keys take defaults).
pub fn build(
    model: &str,
    variant: &str,
    params: &serde_json::Value,
) -> Result<Box<dyn Model>, BuildError> {
    build_mutant(model, variant, params, None)
}

/// The guards of `variant` that `braid mutants` knocks out one at a time (none for the buggy
/// variants).
pub fn guards(model: &str, variant: &str) -> Result<Vec<&'static str>, BuildError> {
    match model {
        "broker" => Ok(broker_variant(model, variant)?.guard_names().to_vec()),
        "relay" => Ok(relay_variant(model, variant)?.guard_names().to_vec()),
        "pubsub" => Ok(pubsub_variant(model, variant)?.guard_names().to_vec()),
        _ => Err(unknown_model(model)),
    }
}

/// The model a replay file was recorded on (its mutant included).
pub fn build_recorded(file: &sim::replay_file::ReplayFile) -> Result<Box<dyn Model>, BuildError> {
    build_mutant(
        &file.model,
        &file.variant,
        &file.params,
        file.mutant.as_deref(),
    )
}

/// Builds `model` in `variant`, with the guard `knock_out` removed when given.
pub fn build_mutant(
    model: &str,
    variant: &str,
    params: &serde_json::Value,
    knock_out: Option<&str>,
) -> Result<Box<dyn Model>, BuildError> {
    match model {
        "broker" => {
            let v = broker_variant(model, variant)?;
            let p: broker::Params = parse_params(model, params)?;
            p.validate().map_err(|message| bad_params(model, message))?;
            match knock_out {
                None => Ok(Box::new(broker::Broker::new(v, p))),
                Some(guard) => broker::Broker::mutant(v, p, guard)
                    .map(|b| Box::new(b) as Box<dyn Model>)
                    .ok_or_else(|| unknown_guard(model, variant, guard, v.guard_names())),
            }
        }
        "relay" => {
            let v = relay_variant(model, variant)?;
            let p: relay::Params = parse_params(model, params)?;
            p.validate().map_err(|message| bad_params(model, message))?;
            match knock_out {
                None => Ok(Box::new(relay::Relay::new(v, p))),
                Some(guard) => relay::Relay::mutant(v, p, guard)
                    .map(|m| Box::new(m) as Box<dyn Model>)
                    .ok_or_else(|| unknown_guard(model, variant, guard, v.guard_names())),
            }
        }
        "pubsub" => {
            let v = pubsub_variant(model, variant)?;
            let p: pubsub::Params = parse_params(model, params)?;
            p.validate().map_err(|message| bad_params(model, message))?;
            match knock_out {
                None => Ok(Box::new(pubsub::PubSubModel::new(v, p))),
                Some(guard) => pubsub::PubSubModel::mutant(v, p, guard)
                    .map(|m| Box::new(m) as Box<dyn Model>)
                    .ok_or_else(|| unknown_guard(model, variant, guard, v.guard_names())),
            }
        }
        _ => Err(unknown_model(model)),
    }
}

fn broker_variant(model: &str, variant: &str) -> Result<broker::Variant, BuildError> {
    broker::Variant::parse(variant).ok_or_else(|| unknown_variant(model, variant))
}

fn relay_variant(model: &str, variant: &str) -> Result<relay::Variant, BuildError> {
    relay::Variant::parse(variant).ok_or_else(|| unknown_variant(model, variant))
}

fn pubsub_variant(model: &str, variant: &str) -> Result<pubsub::Variant, BuildError> {
    pubsub::Variant::parse(variant).ok_or_else(|| unknown_variant(model, variant))
}

fn unknown_model(model: &str) -> BuildError {
    BuildError::UnknownModel {
        name: model.into(),
        known: catalog()
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn bad_params(model: &str, message: String) -> BuildError {
    BuildError::BadParams {
        model: model.into(),
        message,
    }
}

fn unknown_guard(model: &str, variant: &str, guard: &str, known: &[&str]) -> BuildError {
    BuildError::UnknownGuard {
        model: model.into(),
        variant: variant.into(),
        guard: guard.into(),
        known: if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        },
    }
}

fn parse_params<P: serde::de::DeserializeOwned>(
    model: &str,
    params: &serde_json::Value,
) -> Result<P, BuildError> {
    let params = if params.is_null() {
        serde_json::Value::Object(Default::default())
    } else {
        params.clone()
    };
    serde_json::from_value(params).map_err(|e| bad_params(model, e.to_string()))
}

fn unknown_variant(model: &str, variant: &str) -> BuildError {
    let known = catalog()
        .into_iter()
        .find(|m| m.name == model)
        .map(|m| m.variants.join(", "))
        .unwrap_or_default();
    BuildError::UnknownVariant {
        model: model.into(),
        variant: variant.into(),
        known,
    }
}

/// A library check of a scenario file (model, variant, parameters and exploration defaults),
/// for `#[test]`s: `registry::scenario_check("scenarios/broker-bind-race.toml")?.assert_holds()`.
pub fn scenario_check(
    path: impl AsRef<std::path::Path>,
) -> Result<sim::check::Check, Box<dyn std::error::Error>> {
    let scenario = sim::scenario::Scenario::load(path.as_ref())?;
    let model = build(&scenario.model, &scenario.variant, &scenario.params)?;
    let e = &scenario.explore;
    let strategy = sim::scenario::parse_strategy(
        &e.strategy,
        e.depth,
        e.preemption_bound,
        None,
        model.state_visible(),
    )?;
    Ok(sim::check::Check::new(model)
        .strategy(strategy)
        .seed(e.seed)
        .runs(e.runs)
        .max_steps(e.max_steps))
}
