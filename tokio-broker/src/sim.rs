//! The broker under braid: the same source as [`crate::real`], with braid's facades.
// A braid run is single-threaded: its facade types are not `Send`, and `Arc` is what the
// broker code (written for tokio) shares them with.
#![allow(clippy::arc_with_non_send_sync)]

pub use braid::std::sync::atomic;
pub use braid::tokio as rt;

/// Nothing: a braid run is single-threaded.
pub trait MaybeSend {}
impl<T: ?Sized> MaybeSend for T {}

/// Nothing: a braid run is single-threaded.
pub trait MaybeSync {}
impl<T: ?Sized> MaybeSync for T {}

#[path = "broker/mod.rs"]
pub mod broker;
