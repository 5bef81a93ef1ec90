//! The bind race for loom 0.7: the thread model of `broker_threads.rs` over loom's Mutex,
//! RwLock, Condvar, atomics and threads, checked exhaustively by loom's model checker.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod prims {
    pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub use loom::sync::{Condvar, Mutex, RwLock};
    pub use loom::thread;
}

include!("broker_threads.rs");

/// The outcome of one loom check.
pub struct Outcome {
    /// Iterations (executions) started.
    pub iterations: usize,
    pub elapsed: Duration,
    /// Loom explored every execution (within no preemption bound) before the cap.
    pub finished: bool,
    /// A failing execution's panic message (a violation, a deadlock, a loom limit).
    pub failure: Option<String>,
}

static ITERATIONS: StdAtomicUsize = StdAtomicUsize::new(0);

/// How often loom looks at the clock (it does so every `checkpoint_interval` iterations).
const CLOCK_EVERY: usize = 100;

/// `loom::model` on `spec` (no preemption bound: exhaustive), given up after `cap`.
pub fn check(spec: Spec, cap: Duration) -> Outcome {
    let mut builder = loom::model::Builder::new();
    builder.max_duration = Some(cap);
    builder.checkpoint_interval = CLOCK_EVERY;
    builder.preemption_bound = None;
    // The serve loop can switch often in one execution; loom's default of 1000 branches is a
    // per-execution limit, not a bound on the search.
    builder.max_branches = 100_000;
    ITERATIONS.store(0, Ordering::SeqCst);
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            ITERATIONS.fetch_add(1, Ordering::SeqCst);
            execution(spec);
        })
    }));
    let elapsed = start.elapsed();
    let iterations = ITERATIONS.load(Ordering::SeqCst);
    match result {
        // loom returns either when the search is complete or when it saw the cap passed.
        Ok(()) => Outcome {
            iterations,
            elapsed,
            finished: elapsed < cap,
            failure: None,
        },
        Err(payload) => Outcome {
            iterations,
            elapsed,
            finished: false,
            failure: Some(crate::panic_message(payload.as_ref())),
        },
    }
}
