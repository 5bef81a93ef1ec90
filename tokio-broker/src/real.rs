//! The broker under real tokio.

pub use std::sync::atomic;
pub use tokio as rt;

#[path = "broker/mod.rs"]
pub mod broker;
