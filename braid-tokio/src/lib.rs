//! `tokio`, or braid's tokio facade: the drop-in a crate names as `tokio` in its `Cargo.toml`,
//! changing no source file.
//!
//! ```toml
//! [dependencies]
//! tokio = { package = "braid-tokio", path = "...", features = ["full"] }
//! ```
//!
//! - **An ordinary build** (`cargo build`, `cargo test`, `cargo run`): this crate *is* tokio,
//!   re-exported whole (`pub use tokio::*`): every module, `#[tokio::main]`, `#[tokio::test]`,
//!   `select!`, `join!`. The features are tokio's, forwarded to it.
//! - **Built with `--cfg madsim`** (`braid test`, or `RUSTFLAGS="--cfg madsim" cargo test`): it
//!   is [`braid::tokio`](https://docs.rs/braid) (`spawn`, `task`, `sync`, `time`, `select!`,
//!   `join!`, `try_join!`, `pin!`, `task_local!`), and:
//!   - `#[tokio::test]` is a braid exploration of the test (as `#[braid::test]`): its body is
//!     the main task of each run, over many schedules; a failure is shrunk, written as a replay
//!     file and printed with the command that reruns it. tokio's `flavor`, `worker_threads`
//!     and `start_paused` are accepted and ignored (a run is one thread in virtual time, and
//!     explores the interleavings a multi-threaded runtime can produce); `#[braid::test]`'s
//!     settings (`runs`, `seed`, `strategy`, ...) are accepted too, and the `BRAID_*`
//!     variables override them. A test may return `Result<(), E>`: an `Err` fails the run.
//!   - `#[tokio::main]` runs the body once, as the main task of one braid run (a random
//!     schedule, seed `BRAID_SEED` or 1; a failure panics with braid's report). It exists so
//!     that a crate's binaries build, and run, under the cfg; a program is explored through its
//!     tests, not its `main`.
//!
//! What the facade has is what `braid::tokio` has, simulated I/O included (`net`: TCP and UDP
//! between simulated hosts; `fs`: each host's disk; `io`: tokio's traits and utilities).
//! tokio's `process`, `signal` and `runtime` are not there, so code that uses them does not
//! build under the cfg (a test double stands for them: see the README).

#[cfg(not(madsim))]
pub use tokio::*;

#[cfg(madsim)]
pub use braid::tokio::*;

#[cfg(madsim)]
pub use braid_macros::{tokio_main as main, tokio_test as test};

/// braid, for the attributes' expansions (`::tokio::__braid::check`, ...).
#[cfg(madsim)]
#[doc(hidden)]
pub use braid as __braid;
