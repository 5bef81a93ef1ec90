//! Shrinking on a bug of known depth: for seeds 1..=10, the first failing random run on
//! `broker-unbound-behind-access` (a 3-preemption bind race), its preemptions before and after
//! shrinking, and the time shrinking took.
//! `cargo run --release -p models --example shrink_depth [scenario] [strategy]`

use std::path::Path;
use std::time::Instant;

use sim::explore::Explorer;
use sim::scenario::Scenario;
use sim::strategy::StrategyKind;
use sim::RunConfig;

fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "broker-unbound-behind-access".into());
    let strategy = match std::env::args().nth(2).as_deref() {
        Some("portfolio") => StrategyKind::Portfolio,
        _ => StrategyKind::Random,
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let s = Scenario::find(&dir, &name).expect("scenario loads");
    let model = models::registry::build_mutant(&s.model, &s.variant, &s.params, None).unwrap();
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        record_accesses: false,
    };
    for seed in 1..=10 {
        let summary = Explorer::new(model.as_ref())
            .strategy(strategy)
            .seed(seed)
            .runs(20_000)
            .stop_on_first(true)
            .run()
            .unwrap();
        let Some(found) = summary.violations.first() else {
            println!("seed {seed}: no violation");
            continue;
        };
        let start = Instant::now();
        let shrunk = sim::shrink::shrink(model.as_ref(), &found.run, &config);
        let elapsed = start.elapsed();
        println!(
            "seed {seed:2}: {} run {:5}: {:2} preemptions ({} steps) -> {} ({} steps), {:7.1} ms, {} guided runs, {}, DFS runs {} at bounds {:?}{}",
            found.invariant,
            found.first_run,
            found.run.preemptions,
            found.run.steps,
            shrunk.run.preemptions,
            shrunk.run.steps,
            elapsed.as_secs_f64() * 1e3,
            shrunk.attempts,
            shrunk.minimality,
            shrunk.dfs_runs,
            shrunk.dfs_bounds,
            if shrunk.timed_out { " (timed out)" } else { "" },
        );
    }
}
