//! braid's side of the comparison, through its library API: the registry's broker model and
//! the Explorer.

use std::time::Duration;

use sim::explore::{Explorer, Summary};
use sim::strategy::StrategyKind;

/// braid's broker model for `variant` with `publishers` at `grain` ("await" or "access").
pub fn broker(variant: &str, publishers: usize, grain: &str) -> Box<dyn sim::Model> {
    models::registry::build(
        "broker",
        variant,
        &serde_json::json!({"publishers": publishers, "grain": grain}),
    )
    .expect("braid's broker model builds")
}

/// `runs` runs (all of them: no stop at a violation) on one job.
pub fn throughput(model: &dyn sim::Model, strategy: StrategyKind, seed: u64, runs: u64) -> Summary {
    Explorer::new(model)
        .strategy(strategy)
        .seed(seed)
        .runs(runs)
        .jobs(1)
        .run()
        .expect("exploration runs")
}

/// Runs to the first violation (1-based) and the wall time to it, or None within `cap` runs.
pub fn first_violation(
    model: &dyn sim::Model,
    strategy: StrategyKind,
    seed: u64,
    cap: u64,
) -> Option<(u64, Duration)> {
    let summary = Explorer::new(model)
        .strategy(strategy)
        .seed(seed)
        .runs(cap)
        .stop_on_first(true)
        .jobs(1)
        .run()
        .expect("exploration runs");
    summary
        .violations
        .first()
        .map(|found| (found.first_run + 1, found.time_to_first))
}

/// Exhaustive DFS (no preemption bound), with or without partial-order reduction, given up
/// after `cap`.
pub fn exhaustive(model: &dyn sim::Model, reduction: bool, cap: Duration) -> Summary {
    Explorer::new(model)
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction,
        })
        .time(cap)
        .run()
        .expect("exploration runs")
}
