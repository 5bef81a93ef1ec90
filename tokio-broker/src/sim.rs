//! The broker under braid: the same source as [`crate::real`], with braid's facades.

pub use braid::std::sync::atomic;
/// The broker's own synchronous locks (its in-memory store): braid's, so that every access to
/// the state they guard is one braid sees.
pub use braid::std::sync::Mutex;
pub use braid::tokio as rt;

/// A storage call's round trip in the in-memory store: an I/O await, after which any task may
/// run next (not a fair `yield_now`, which would let every other task move before each reply).
pub async fn round_trip(call: &'static str) {
    braid::task::io_point(call).await;
}

#[path = "broker/mod.rs"]
pub mod broker;
