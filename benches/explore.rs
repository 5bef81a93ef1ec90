//! `cargo bench`: runs per second per scenario (single job), and runs and wall time to the
//! first violation over 20 seeds (median) for each strategy on the buggy scenarios.
//!
//! `cargo bench -- --quick` uses fewer runs; any other argument filters scenarios by name.

use std::path::Path;

use sim::explore::Explorer;
use sim::scenario::{Expected, Scenario};
use sim::strategy::StrategyKind;

const SEEDS: u64 = 20;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let quick = args.iter().any(|a| a == "--quick");
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let runs = if quick { 5_000 } else { 50_000 };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let scenarios = Scenario::load_dir(&dir).expect("scenarios load");
    println!("throughput: {runs} runs per scenario, single job, release");
    println!(
        "{:<32} {:>10} {:>8} {:>12}",
        "scenario", "strategy", "steps", "runs/s"
    );
    for s in scenarios
        .iter()
        .filter(|s| filter.is_empty() || filter.iter().any(|f| s.name.contains(f.as_str())))
    {
        let model = models::registry::build(&s.model, &s.variant, &s.params).expect("model");
        for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
            let summary = Explorer::new(model.as_ref())
                .strategy(strategy)
                .seed(1)
                .runs(runs)
                .run()
                .expect("explore");
            println!(
                "{:<32} {:>10} {:>8} {:>12.0}",
                s.name,
                format!("{strategy:?}")
                    .to_lowercase()
                    .replace(" { depth: ", "/")
                    .replace(" }", ""),
                summary.max_steps_seen,
                summary.runs_per_sec()
            );
        }
    }
    println!();
    println!("first violation over {SEEDS} seeds (median; budget 100000 runs per seed)");
    println!(
        "{:<32} {:>10} {:>14} {:>14} {:>8}",
        "scenario", "strategy", "runs to first", "ms to first", "found"
    );
    for s in scenarios
        .iter()
        .filter(|s| filter.is_empty() || filter.iter().any(|f| s.name.contains(f.as_str())))
    {
        let Expected::Violation(expected) = &s.expected else {
            continue;
        };
        let model = models::registry::build(&s.model, &s.variant, &s.params).expect("model");
        let depth = s.explore.depth;
        for strategy in [
            StrategyKind::Random,
            StrategyKind::Pct { depth: 3 },
            StrategyKind::Pct { depth },
        ] {
            let mut runs_to = Vec::new();
            let mut time_to = Vec::new();
            let mut found = 0;
            for seed in 1..=SEEDS {
                let summary = Explorer::new(model.as_ref())
                    .strategy(strategy)
                    .seed(seed)
                    .runs(100_000)
                    .stop_on_first(true)
                    .run()
                    .expect("explore");
                match summary
                    .violations
                    .iter()
                    .find(|f| expected.contains(&f.invariant))
                {
                    Some(f) => {
                        found += 1;
                        runs_to.push((f.first_run + 1) as f64);
                        time_to.push(f.time_to_first.as_secs_f64() * 1e3);
                    }
                    None => {
                        runs_to.push(f64::INFINITY);
                        time_to.push(f64::INFINITY);
                    }
                }
            }
            println!(
                "{:<32} {:>10} {:>14.0} {:>14.2} {:>5}/{SEEDS}",
                s.name,
                format!("{strategy:?}")
                    .to_lowercase()
                    .replace(" { depth: ", "/")
                    .replace(" }", ""),
                median(runs_to),
                median(time_to),
                found
            );
            if strategy == (StrategyKind::Pct { depth: 3 }) && depth == 3 {
                break;
            }
        }
    }
}
