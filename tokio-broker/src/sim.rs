//! The broker under braid: the same source as [`crate::real`], with braid's facades.

pub use braid::std::sync::atomic;
pub use braid::tokio as rt;

#[path = "broker/mod.rs"]
pub mod broker;
