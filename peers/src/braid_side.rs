//! braid's side of the comparison, through its library API: the registry's models (built from
//! explicit parameters or from a scenario file of this workspace) and the Explorer.

use std::path::Path;
use std::time::Duration;

use sim::explore::{Explorer, Summary};
use sim::scenario::Scenario;
use sim::strategy::{Reduction, StrategyKind};

/// braid's broker model for `variant` with `publishers` at `grain` ("await" or "access").
pub fn broker(variant: &str, publishers: usize, grain: &str) -> Box<dyn sim::Model> {
    models::registry::build(
        "broker",
        variant,
        &serde_json::json!({"publishers": publishers, "grain": grain}),
    )
    .expect("braid's broker model builds")
}

/// braid's `model` in `variant` with `params` (as a scenario file gives them).
pub fn model(model: &str, variant: &str, params: &serde_json::Value) -> Box<dyn sim::Model> {
    models::registry::build(model, variant, params)
        .unwrap_or_else(|e| panic!("{model}/{variant}: {e}"))
}

/// The scenario `scenarios/<name>.toml` of this workspace, and braid's model for it.
pub fn scenario(name: &str) -> (Scenario, Box<dyn sim::Model>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let model = self::model(&scenario.model, &scenario.variant, &scenario.params);
    (scenario, model)
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

/// The first violation within `cap` runs: runs to it (1-based), the wall time to it, and the
/// invariant it broke.
pub fn first_violation(
    model: &dyn sim::Model,
    strategy: StrategyKind,
    seed: u64,
    cap: u64,
) -> Option<(u64, Duration, String)> {
    let summary = Explorer::new(model)
        .strategy(strategy)
        .seed(seed)
        .runs(cap)
        .stop_on_first(true)
        .jobs(1)
        .run()
        .expect("exploration runs");
    summary.violations.first().map(|found| {
        (
            found.first_run + 1,
            found.time_to_first,
            found.invariant.clone(),
        )
    })
}

/// DFS within `preemption_bound` (None: exhaustive) with `reduction`, on one job, given up after
/// `cap`.
pub fn exhaustive(
    model: &dyn sim::Model,
    preemption_bound: Option<usize>,
    reduction: Reduction,
    cap: Duration,
) -> Summary {
    Explorer::new(model)
        .strategy(StrategyKind::Dfs {
            preemption_bound,
            reduction,
        })
        .time(cap)
        .jobs(1)
        .run()
        .expect("exploration runs")
}
