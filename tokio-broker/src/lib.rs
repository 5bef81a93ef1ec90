//! The MQTT broker's QoS1 backlog and lane (reference: broker-bind-race.md), written a second
//! time as ordinary tokio code: the client queue with std-shaped atomics beside its mutex
//! (`behind()` is four plain loads), the router, the client handler whose serve loop is a
//! `select!` over the bounded `mpsc` lane, the acks and the backlog, and a storage trait.
//!
//! One source, `src/broker/`, is compiled twice; only the imports differ:
//!
//! - [`real`]: `rt` is `::tokio`, `atomic` is `std::sync::atomic` (what the broker ships with).
//! - [`sim`]: `rt` is `braid::tokio`, `atomic` is `braid::std::sync::atomic`, so every lock,
//!   channel operation, notify and atomic access is a braid scheduling point.
//!
//! Nothing else differs: braid's facade types are `Send` and `Sync` where tokio's are, so the
//! storage trait's futures carry the same `Send` bound in both builds.

// Compiling `src/broker/` once per runtime is what this crate is for.
#![allow(clippy::duplicate_mod)]

pub mod real;
pub mod sim;
