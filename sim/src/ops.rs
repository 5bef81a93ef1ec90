//! Scheduling points that are not tied to an object.

use crate::rt::op::Op;
use crate::rt::task::point;

/// Stands for a real `.await` (a database call, a storage read): any task may run here.
pub async fn yield_point(label: &'static str) {
    point(Op::Yield(label)).await;
}

/// Data nondeterminism: a value in `0..n` chosen by the strategy (does this check fail?).
pub async fn choose(n: usize) -> usize {
    assert!(n > 0, "choose needs at least one alternative");
    point(Op::Choose(n)).await
}
