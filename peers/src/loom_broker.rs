//! The bind race for loom 0.7: the thread model of `broker_threads.rs` over loom's primitives,
//! checked exhaustively by loom's model checker.

use std::time::Duration;

use crate::loom_rt::{prims, Outcome};

include!("broker_threads.rs");

/// `loom::model` on `spec` (no preemption bound: exhaustive), given up after `cap`.
pub fn check(spec: Spec, cap: Duration) -> Outcome {
    crate::loom_rt::check(cap, None, move || execution(spec))
}
