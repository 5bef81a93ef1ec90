//! `tokio::sync::mpsc`: a bounded channel, whose `send` waits while it is full
//! (back-pressure), and an unbounded one, whose `send` never waits.

mod bounded;
mod chan;
pub mod error;
mod unbounded;

pub use bounded::{channel, OwnedPermit, Permit, PermitIterator, Receiver, Sender};
pub use unbounded::{unbounded_channel, UnboundedReceiver, UnboundedSender};
