//! A tokio-shaped facade: the paths and signatures of `tokio` over braid's engine, so code
//! written for tokio runs under braid with one line changed:
//!
//! ```ignore
//! #[cfg(madsim)]
//! use braid::tokio;
//! ```
//!
//! (or, as madsim-tokio does, a Cargo rename: `tokio = { package = "braid", ... }` is not
//! possible for a module, so keep the `use` line). What is here so far: `spawn`, `task`
//! (`spawn`, `yield_now`, `JoinHandle`), `sync` (`Mutex`, `Notify`, `mpsc`, `oneshot`) and
//! `time` (`sleep`, `sleep_until`, `timeout`, `interval`, `Instant`, `Duration`), in virtual
//! time: a sleep never waits on the wall clock; when every task waits and timers are pending,
//! time jumps to the next deadline, and timers due at the same instant fire in an order the
//! strategy picks.
//!
//! ```
//! use std::time::Duration;
//! use braid::tokio::{self, sync::oneshot, time};
//!
//! braid::check(|| async {
//!     let (tx, rx) = oneshot::channel::<u32>();
//!     tokio::spawn(async move {
//!         time::sleep(Duration::from_millis(5)).await;
//!         let _ = tx.send(1);
//!     });
//!     // The reply comes at 5 ms, well before the deadline: holds in every schedule.
//!     assert_eq!(time::timeout(Duration::from_millis(10), rx).await.unwrap().unwrap(), 1);
//! })
//! .assert_holds();
//! ```

mod oneshot;

pub use crate::task::spawn;

/// `tokio::task`.
pub mod task {
    pub use crate::task::{spawn, yield_now, JoinError, JoinHandle};
}

/// `tokio::sync`.
pub mod sync {
    pub use crate::sync::{mpsc, Mutex, MutexGuard, Notify};

    /// `tokio::sync::oneshot`: one value from one task to another.
    pub mod oneshot {
        pub use crate::tokio::oneshot::{channel, error, Receiver, Sender};
    }
}

/// `tokio::time`, in virtual time.
pub mod time {
    pub use sim::time::{
        interval, sleep, sleep_until, timeout, Elapsed, Instant, Interval, Sleep, Timeout,
    };
    pub use std::time::Duration;

    /// `tokio::time::error`.
    pub mod error {
        pub use sim::time::Elapsed;
    }
}
