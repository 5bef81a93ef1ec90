//! The MQTT broker's QoS1 backlog and lane (reference: broker-bind-race.md), written a second
//! time as ordinary tokio code: the client queue with std-shaped atomics beside its mutex
//! (`behind()` is four plain loads), the router, the client handler whose serve loop is a
//! `select!` over the bounded `mpsc` lane, the acks and the backlog, and a storage trait.
//!
//! Over a real transport too: a TCP front end (`rt::net`, a line protocol: CONNECT and
//! CONNACK, PUBLISH, PUBACK) bridges each of c's connections to a handler, a reconnect taking
//! c's session over as a new connection generation; c connects, checks and acknowledges over
//! TCP; and the session store can be a file (`rt::fs`: an append-only log, synced before each
//! call returns, or, the "ack before sync" bug, never synced). Under braid the broker is a
//! node that crashes and restarts from its file while c reconnects (tests/braid_tcp.rs).
//!
//! One source, `src/broker/`, is compiled twice; only the imports differ:
//!
//! - [`real`]: `rt` is `::tokio`, `atomic` is `std::sync::atomic`, `Mutex` std's (what the
//!   broker ships with).
//! - [`sim`]: `rt` is `braid::tokio`, `atomic` is `braid::std::sync::atomic`, `Mutex` is
//!   `braid::std::sync::Mutex` (the in-memory store's lock), so every lock,
//!   channel operation, notify and atomic access is a braid scheduling point, and every socket
//!   and file operation one on braid's simulated network and disks.
//!
//! Nothing else differs: braid's facade types are `Send` and `Sync` where tokio's are, so the
//! storage trait's futures carry the same `Send` bound in both builds.

// Compiling `src/broker/` once per runtime is what this crate is for.
#![allow(clippy::duplicate_mod)]

pub mod real;
pub mod sim;
