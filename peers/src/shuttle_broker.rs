//! The bind race for shuttle 0.9: the thread model of `broker_threads.rs` over shuttle's
//! Mutex, RwLock, Condvar, atomics and threads, run under shuttle's random and PCT schedulers.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering};
use std::time::{Duration, Instant};

use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler};
use shuttle::{Config, FailurePersistence, Runner};

mod prims {
    pub use shuttle::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub use shuttle::sync::{Condvar, Mutex, RwLock};
    pub use shuttle::thread;
}

include!("broker_threads.rs");

/// Which shuttle scheduler.
#[derive(Clone, Copy, Debug)]
pub enum Sched {
    Random,
    Pct { depth: usize },
}

/// The outcome of one shuttle `Runner::run`.
pub struct Outcome {
    /// Executions started (the failing one included).
    pub runs: usize,
    pub elapsed: Duration,
    /// The failure's panic message, if an execution failed.
    pub failure: Option<String>,
}

/// Executions started by the current `explore` (shuttle's Runner reports a count only when no
/// execution fails).
static EXECUTIONS: StdAtomicUsize = StdAtomicUsize::new(0);

/// Runs `spec` for at most `runs` executions under `sched` with `seed`; stops at the first
/// failing execution.
pub fn explore(spec: Spec, sched: Sched, seed: u64, runs: usize) -> Outcome {
    match sched {
        Sched::Random => run_with(RandomScheduler::new_from_seed(seed, runs), spec),
        Sched::Pct { depth } => run_with(PctScheduler::new_from_seed(seed, depth, runs), spec),
    }
}

fn run_with(scheduler: impl Scheduler + 'static, spec: Spec) -> Outcome {
    let mut config = Config::new();
    config.failure_persistence = FailurePersistence::None;
    config.silence_warnings = true;
    EXECUTIONS.store(0, Ordering::SeqCst);
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(scheduler, config).run(move || {
            EXECUTIONS.fetch_add(1, Ordering::SeqCst);
            execution(spec);
        })
    }));
    let elapsed = start.elapsed();
    // shuttle's panic hook (installed at its first run, wrapping ours) reports every later
    // panic, braid's and loom's included: put the quiet one back (failures are still caught).
    crate::quiet_panics();
    let runs = EXECUTIONS.load(Ordering::SeqCst);
    match result {
        Ok(n) => {
            debug_assert_eq!(n, runs);
            Outcome {
                runs,
                elapsed,
                failure: None,
            }
        }
        Err(payload) => Outcome {
            runs,
            elapsed,
            failure: Some(crate::panic_message(payload.as_ref())),
        },
    }
}
