//! Shrinking on a bug of known depth: for seeds 1..=10, the first failing random run on
//! `broker-unbound-behind-access` (a 3-preemption bind race), its preemptions before and after
//! shrinking (the guided 1-minimal passes alone, as before, and with the bounded DFS below the
//! count), and the time shrinking took.
//! `cargo run --release -p models --example shrink_depth [scenario] [strategy]`

use std::path::Path;
use std::time::Instant;

use sim::explore::Explorer;
use sim::scenario::Scenario;
use sim::shrink::{shrink_with, ShrinkOptions};
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
        let old = shrink_with(
            model.as_ref(),
            &found.run,
            &config,
            ShrinkOptions::ONE_MINIMAL,
        );
        let old_ms = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        let new = shrink_with(
            model.as_ref(),
            &found.run,
            &config,
            ShrinkOptions::default(),
        );
        let new_ms = start.elapsed().as_secs_f64() * 1e3;
        println!(
            "seed {seed:2}: {} in run {:5}: {:2} preemptions | 1-minimal only: {:2} ({} steps) in {:6.1} ms | with the search below: {} ({} steps, {}) in {:7.1} ms, {} DFS runs at bounds {:?}{}",
            found.invariant,
            found.first_run,
            found.run.preemptions,
            old.run.preemptions,
            old.run.steps,
            old_ms,
            new.run.preemptions,
            new.run.steps,
            new.minimality,
            new_ms,
            new.dfs_runs,
            new.dfs_bounds,
            if new.timed_out { " (timed out)" } else { "" },
        );
    }
}
