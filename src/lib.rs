//! # braid: check your own races
//!
//! braid runs an async test over many schedules under a controlled, seeded scheduler, finds
//! the one that fails, shrinks it to the fewest preemptions, writes it as a replay file, and
//! tells you the command that reruns it.
//!
//! ```
//! use std::sync::Arc;
//!
//! #[braid::test]
//! async fn lock_held_across_the_update() {
//!     let counter = Arc::new(braid::sync::Mutex::new(0u32));
//!     let mut tasks = Vec::new();
//!     for _ in 0..2 {
//!         let counter = counter.clone();
//!         tasks.push(braid::spawn(async move {
//!             let mut guard = counter.lock().await;
//!             braid::task::yield_now().await;
//!             *guard += 1;
//!         }));
//!     }
//!     for t in tasks {
//!         t.await.unwrap();
//!     }
//!     assert_eq!(*counter.lock().await, 2); // holds in every schedule
//! }
//! ```
//!
//! `cargo test` runs it over many schedules. The same check as a function, which returns a
//! [`Report`] instead of panicking:
//!
//! ```
//! let report = braid::check(|| async {
//!     let task = braid::spawn(async { 1 + 1 });
//!     assert_eq!(task.await.unwrap(), 2);
//! })
//! .run();
//! assert!(matches!(report.outcome, braid::Outcome::Holds { exhaustive: true, .. }));
//! ```
//!
//! The test body is the run's main task; [`spawn`] starts others; every operation on a
//! [`sync`] primitive is a scheduling point; a panic (a failed `assert!`) anywhere, a deadlock,
//! or a broken [`always`]/[`eventually`] property is a failure. [`check`] is the same as a
//! function, for checks that configure themselves.
//!
//! Code written for tokio needs no change: name `braid-tokio` as `tokio` in `Cargo.toml` (it is
//! real tokio in an ordinary build and [`tokio`] under `--cfg madsim`, where `#[tokio::test]`
//! is a braid exploration), and run `braid test` (the command line, package `braid-cli`).

#![deny(missing_docs)]

mod audit;
mod check;
mod failure;
pub mod linearizable;
pub mod node;
mod outcome;
mod outcome_file;
mod property;
mod regressions;
mod settings;
mod shard;
#[path = "std_shaped.rs"]
pub mod std;
mod std_sync;
pub mod sync;
pub mod task;
mod test_model;
pub mod tokio;
mod world;

pub use check::{check, Check, Strategy};
pub use failure::{Failure, Source};
pub use linearizable::linearizable;
pub use outcome::{Outcome, Regression, Report, Status as RegressionStatus};
pub use property::{always, eventually, Log, Property};
pub use sim::Grain;
pub use task::spawn;

/// The engine: models, strategies, exploration, replay files (what the `braid` command line
/// and the models in `models/` are built on).
pub use sim as engine;

/// An `async fn` test that braid runs over many schedules, as `#[tokio::test]` runs one.
///
/// ```
/// #[braid::test(runs = 2_000, strategy = "pct", depth = 2, seed = 7)]
/// async fn two_tasks() {
///     let t = braid::spawn(async { 1 });
///     assert_eq!(t.await.unwrap(), 1);
/// }
/// ```
///
/// Settings (all optional): `runs` (default 10,000), `time` (seconds), `seed` (default 1),
/// `max_steps` (default 10,000), `clock_jumps` (default 1; 0 is tokio's paused clock, see
/// [`Check::clock_jumps`]), `strategy` (`"default"`, `"random"`, `"pct"` with `depth`,
/// `"portfolio"`, `"pos"`, `"dfs"` with `preemption_bound`), `out` (where a failure's replay file goes,
/// default `target/braid/`), `regressions` (committed replay files replayed first, default
/// `braid-regressions/<test file stem>/` beside the test).
///
/// Environment overrides: `BRAID_SEED`, `BRAID_RUNS`, `BRAID_TIME` (seconds), `BRAID_OUT`, and
/// `BRAID_REPLAY=<file>`: follow that replay file's schedule (the test it names) instead of
/// exploring. A failure prints the trace and the exact command that reruns that one test, e.g.
/// `BRAID_REPLAY=target/braid/braid/my_test.json braid test -- -p my_crate --test my_test --
/// --exact my_test` (and the same as `RUSTFLAGS="--cfg madsim" cargo test ...`). A pass prints
/// one line, `braid: <test> holds (<runs> runs: <how far the proof got>)`, seen with
/// `--nocapture` and in `braid test`'s table.
pub use braid_macros::test;

#[doc(hidden)]
pub mod __private {
    pub use crate::failure::TestInfo;

    /// What `#[braid::test]` expands to.
    pub fn run_test(info: TestInfo, check: crate::Check) {
        check.test_info(info).assert_holds();
    }

    /// What a test body may return, as `#[tokio::test]` allows: `()`, or a `Result` whose
    /// `Err` fails the run (as a panic naming the error).
    pub trait TestOutput {
        /// Panics on an error.
        fn check(self);
    }

    impl TestOutput for () {
        fn check(self) {}
    }

    impl<E: std::fmt::Debug> TestOutput for Result<(), E> {
        fn check(self) {
            if let Err(e) = self {
                panic!("the test returned Err({e:?})");
            }
        }
    }

    /// What `#[tokio::main]` expands to under `--cfg madsim` (through `braid-tokio`): the body
    /// runs once, as the main task of one braid run (a random schedule, seed `BRAID_SEED` or 1),
    /// so that the program builds and runs under the facade; a failure panics with braid's
    /// report. A binary is not explored: its races are checked by tests.
    pub fn run_main<F, Fut>(info: TestInfo, body: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        let report = crate::check(body)
            .strategy(crate::Strategy::Random)
            .runs(1)
            .test_info(info)
            .run();
        match report.outcome {
            crate::Outcome::Failed(failure) => {
                eprintln!("{}", failure.trace);
                panic!("{failure}");
            }
            crate::Outcome::Drifted(why) => panic!("braid: {why}"),
            crate::Outcome::Holds { .. } | crate::Outcome::Inconclusive(_) => {}
        }
    }
}
