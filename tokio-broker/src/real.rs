//! The broker under real tokio.

pub use std::sync::atomic;
pub use tokio as rt;

/// `Send`, as a multi-threaded runtime needs.
pub trait MaybeSend: Send {}
impl<T: Send + ?Sized> MaybeSend for T {}

/// `Sync`, as a multi-threaded runtime needs.
pub trait MaybeSync: Sync {}
impl<T: Sync + ?Sized> MaybeSync for T {}

#[path = "broker/mod.rs"]
pub mod broker;
