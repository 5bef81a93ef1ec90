//! shuttle 0.9 as the thread models see it (`prims`: shuttle's Mutex, RwLock, Condvar, atomics
//! and threads, and the helpers of `threads_sync.rs` over them) and as the table drives it
//! (`explore`: one `Runner::run` under shuttle's random or PCT scheduler, stopped at the first
//! failing execution).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering};
use std::time::{Duration, Instant};

use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler};
use shuttle::{Config, FailurePersistence, Runner};

pub mod prims {
    pub use shuttle::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub use shuttle::sync::{Condvar, Mutex, MutexGuard, RwLock};
    pub use shuttle::thread;

    /// braid's `choose`: shuttle's own random source, which its schedulers drive and replay.
    fn pick(n: usize) -> usize {
        use shuttle::rand::Rng;
        shuttle::rand::thread_rng().gen_range(0..n)
    }

    /// shuttle does not reduce: a recorded access needs nothing from it (and, as in braid, is
    /// not a scheduling point).
    fn track(_order: &AtomicUsize, _write: bool) {}

    include!("threads_sync.rs");
}

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

/// Runs `execution` for at most `runs` executions under `sched` with `seed`; stops at the first
/// failing execution.
pub fn explore(
    sched: Sched,
    seed: u64,
    runs: usize,
    execution: impl Fn() + Send + Sync + 'static,
) -> Outcome {
    match sched {
        Sched::Random => run_with(RandomScheduler::new_from_seed(seed, runs), execution),
        Sched::Pct { depth } => run_with(PctScheduler::new_from_seed(seed, depth, runs), execution),
    }
}

fn run_with(
    scheduler: impl Scheduler + 'static,
    execution: impl Fn() + Send + Sync + 'static,
) -> Outcome {
    let mut config = Config::new();
    config.failure_persistence = FailurePersistence::None;
    config.silence_warnings = true;
    EXECUTIONS.store(0, Ordering::SeqCst);
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(scheduler, config).run(move || {
            EXECUTIONS.fetch_add(1, Ordering::SeqCst);
            execution();
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
