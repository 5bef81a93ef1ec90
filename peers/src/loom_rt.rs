//! loom 0.7 as the thread models see it (`prims`: loom's Mutex, RwLock, Condvar, atomics and
//! threads, and the helpers of `threads_sync.rs` over them) and as the table drives it
//! (`check`: one `loom::model` search, given up after a time cap).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub mod prims {
    pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub use loom::sync::{Condvar, Mutex, MutexGuard, RwLock};
    pub use loom::thread;

    /// braid's `choose`: loom has no data nondeterminism (it explores thread interleavings and
    /// the values weak-memory loads may return, nothing else), and a thread racing for a coin
    /// would cost one of its five threads (the relay model uses all five). It takes the first
    /// alternative.
    fn pick(_n: usize) -> usize {
        0
    }

    /// A recorded access: loom's DPOR only sees the dependencies between operations on its own
    /// objects, so each access to plain shared state is an atomic access (a load for a read, a
    /// read-modify-write for a write). Unlike braid's recorded access, this is also a point
    /// where loom may switch threads.
    fn track(order: &AtomicUsize, write: bool) {
        if write {
            order.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        } else {
            order.load(std::sync::atomic::Ordering::SeqCst);
        }
    }

    include!("threads_sync.rs");
}

/// The outcome of one loom check.
pub struct Outcome {
    /// Iterations (executions) started.
    pub iterations: usize,
    pub elapsed: Duration,
    /// Loom explored every execution (within the preemption bound, if any) before the cap.
    pub finished: bool,
    /// A failing execution's panic message (a violation, a deadlock, a loom limit).
    pub failure: Option<String>,
}

static ITERATIONS: StdAtomicUsize = StdAtomicUsize::new(0);

/// How often loom looks at the clock (it does so every `checkpoint_interval` iterations).
const CLOCK_EVERY: usize = 100;

/// `loom::model` on `execution` (with no preemption bound: exhaustive), given up after `cap`.
pub fn check(
    cap: Duration,
    preemption_bound: Option<usize>,
    execution: impl Fn() + Sync + Send + 'static,
) -> Outcome {
    let mut builder = loom::model::Builder::new();
    builder.max_duration = Some(cap);
    builder.checkpoint_interval = CLOCK_EVERY;
    builder.preemption_bound = preemption_bound;
    // A server loop can switch often in one execution; loom's default of 1000 branches is a
    // per-execution limit, not a bound on the search.
    builder.max_branches = 100_000;
    ITERATIONS.store(0, Ordering::SeqCst);
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            ITERATIONS.fetch_add(1, Ordering::SeqCst);
            execution();
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
