//! `tokio::time`, in virtual time: braid's clock (`sim::time`) with tokio's types in front of
//! it, so that a sleep's deadline is fixed when it is made, a timer's poll takes a unit of the
//! cooperative budget, and `Sleep::reset`, `interval_at`, `Interval::poll_tick` and
//! `MissedTickBehavior` are there, as in tokio.

mod control;
mod interval;
mod sleep;
mod timeout;

pub use sim::time::{Elapsed, Instant};
pub use std::time::Duration;

pub use control::{advance, pause, resume};
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_until, Sleep};
pub use timeout::{timeout, timeout_at, Timeout};

/// `tokio::time::error`.
pub mod error {
    pub use sim::time::Elapsed;
}
