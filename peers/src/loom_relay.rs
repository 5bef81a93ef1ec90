//! The relay's same-ID replacement for loom 0.7: the thread model of `relay_threads.rs` over
//! loom's primitives, checked by loom's model checker.

use std::time::Duration;

use crate::loom_rt::{prims, Outcome};

include!("relay_threads.rs");

/// `loom::model` on `spec` within `preemption_bound` (None: exhaustive), given up after `cap`.
pub fn check(spec: Spec, cap: Duration, preemption_bound: Option<usize>) -> Outcome {
    crate::loom_rt::check(cap, preemption_bound, move || execution(spec))
}
