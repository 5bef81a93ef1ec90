//! The relay's same-ID replacement for shuttle 0.9: the thread model of `relay_threads.rs` over
//! shuttle's primitives, run under shuttle's random and PCT schedulers.

use crate::shuttle_rt::{prims, Outcome, Sched};

include!("relay_threads.rs");

/// Runs `spec` for at most `runs` executions under `sched` with `seed`; stops at the first
/// failing execution.
pub fn explore(spec: Spec, sched: Sched, seed: u64, runs: usize) -> Outcome {
    crate::shuttle_rt::explore(sched, seed, runs, move || execution(spec))
}
