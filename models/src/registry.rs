//! Models by name: what exists, and how to build one from a variant name and parameters.

use sim::Model;
use thiserror::Error;

use crate::broker;

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
    #[error("bad parameters for model '{model}': {message}")]
    BadParams { model: String, message: String },
}

/// A model and its variants, for `braid list`.
pub struct ModelInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub variants: Vec<&'static str>,
}

pub fn catalog() -> Vec<ModelInfo> {
    vec![ModelInfo {
        name: "broker",
        summary: "MQTT v5 broker: QoS1 backlog and lane, the reconnect/bind race",
        variants: broker::Variant::ALL.iter().map(|v| v.name()).collect(),
    }]
}

/// Builds `model` in `variant` with `params` (a JSON object; absent keys take defaults).
pub fn build(
    model: &str,
    variant: &str,
    params: &serde_json::Value,
) -> Result<Box<dyn Model>, BuildError> {
    match model {
        "broker" => {
            let v =
                broker::Variant::parse(variant).ok_or_else(|| unknown_variant(model, variant))?;
            let p: broker::Params = parse_params(model, params)?;
            p.validate().map_err(|message| BuildError::BadParams {
                model: model.into(),
                message,
            })?;
            Ok(Box::new(broker::Broker::new(v, p)))
        }
        _ => Err(BuildError::UnknownModel {
            name: model.into(),
            known: catalog()
                .iter()
                .map(|m| m.name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
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
    serde_json::from_value(params).map_err(|e| BuildError::BadParams {
        model: model.into(),
        message: e.to_string(),
    })
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
