//! braid's models, written in the shape of the code they stand for, and a registry by name.

pub mod bounds;
pub mod broker;
pub mod pubsub;
pub mod registry;
pub mod relay;
