//! The world a test's services live in: hosts with names and addresses, the network between
//! them and a disk each (turmoil's and madsim's idea), kept per run and reset with it. What can
//! go wrong in it is a decision of the strategy, never a draw of a hidden generator: when a
//! segment arrives (a delivery task's step), a connection reset and a partition (fault sites,
//! `Check::network_faults`), and, when a host crashes (`Check::crashes`), what became of each
//! write it had not synced. `braid::tokio::{net, fs}` are tokio's types over it.

pub(crate) mod datagram;
pub(crate) mod disk;
pub(crate) mod hosts;
pub(crate) mod network;
pub(crate) mod pipe;
