//! Runs to the first violation on generated programs, for the default plan against each single
//! strategy (issue 30, item 3: the default within 2x the best single strategy on every bug).
//! `benches/explore.rs` measures the same on the scenarios; the generated programs (see
//! `sim/tests/proggen`) add many small bugs of every shape, mostly found within a few runs,
//! where an enumeration is often the best strategy.
//!
//! ```sh
//! cargo run --release -p sim --example first_violation -- --programs 300 --seed 1
//! ```
//!
//! Options: `--programs N` (default 200), `--seed S` (the first program's seed, default 1),
//! `--budget R` (runs per search, default 20000), `--seeds K` (exploration seeds per sampling
//! strategy, default 20), `--spin` (programs that yield fairly), `--verbose` (a line per buggy
//! program). A program counts as buggy when unbounded plain DFS finds a violation within the
//! budget. For each strategy: the median over the seeds of the run (1-based, counting runs a
//! reduction cut short) at which the first violation was found; a strategy that misses it in
//! more than half the seeds has an infinite median. DFS is deterministic: one seed.

#[path = "../tests/proggen/mod.rs"]
mod proggen;

use std::sync::Arc;

use proggen::{generate, GenModel, GenOptions, Program};
use sim::explore::Explorer;
use sim::strategy::{Reduction, StrategyKind};

struct Args {
    programs: u64,
    seed: u64,
    budget: u64,
    seeds: u64,
    opts: GenOptions,
    verbose: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        programs: 200,
        seed: 1,
        budget: 20_000,
        seeds: 20,
        opts: GenOptions::default(),
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--spin" => args.opts.spin = true,
            "--verbose" => args.verbose = true,
            _ => {
                let value = it.next().ok_or(format!("{flag} needs a value"))?;
                let n: u64 = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
                match flag.as_str() {
                    "--programs" => args.programs = n,
                    "--seed" => args.seed = n,
                    "--budget" => args.budget = n,
                    "--seeds" => args.seeds = n.max(1),
                    other => return Err(format!("unknown option {other}")),
                }
            }
        }
    }
    Ok(args)
}

/// The strategies compared: the default plan, then the single ones.
fn strategies() -> Vec<(&'static str, StrategyKind)> {
    vec![
        ("default", StrategyKind::Default),
        ("random", StrategyKind::Random),
        ("pos", StrategyKind::Pos),
        ("pct/2", StrategyKind::Pct { depth: 2 }),
        ("pct/3", StrategyKind::Pct { depth: 3 }),
        ("pct/5", StrategyKind::Pct { depth: 5 }),
        ("pct/6", StrategyKind::Pct { depth: 6 }),
        ("pct/8", StrategyKind::Pct { depth: 8 }),
        ("pct/10", StrategyKind::Pct { depth: 10 }),
        ("dfs", StrategyKind::dfs(None)),
    ]
}

/// The run at which `strategy` seeded by `seed` first found a violation, if it did.
fn first_violation(
    program: &Arc<Program>,
    strategy: StrategyKind,
    seed: u64,
    budget: u64,
) -> Option<u64> {
    let model = GenModel {
        program: program.clone(),
        visible: false,
    };
    let mut explorer = Explorer::new(&model)
        .strategy(strategy)
        .seed(seed)
        .runs(budget)
        .stop_on_first(true);
    if let Some(steps) = program.max_steps() {
        explorer = explorer.max_steps(steps);
    }
    let summary = explorer.run().expect("explore");
    summary.violations.iter().map(|f| f.first_run + 1).min()
}

/// Whether plain unbounded DFS finds a violation within the budget.
fn buggy(program: &Arc<Program>, budget: u64) -> bool {
    let plain = StrategyKind::Dfs {
        preemption_bound: None,
        reduction: Reduction::None,
    };
    first_violation(program, plain, 0, budget).is_some()
}

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
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("first_violation: {e}");
            std::process::exit(2);
        }
    };
    let strategies = strategies();
    // Per strategy: how often it was the best, and per program the default's ratio to the best.
    let mut ratios: Vec<(u64, f64, &'static str)> = Vec::new();
    let mut best_counts = vec![0u64; strategies.len()];
    let mut buggy_programs = 0;
    for i in 0..args.programs {
        let program = Arc::new(generate(args.seed + i, &args.opts));
        if !buggy(&program, args.budget) {
            continue;
        }
        buggy_programs += 1;
        let medians: Vec<f64> = strategies
            .iter()
            .map(|&(_, strategy)| {
                let seeds = if strategy.is_exhaustive() {
                    1
                } else {
                    args.seeds
                };
                let runs: Vec<f64> = (1..=seeds)
                    .map(|seed| {
                        first_violation(&program, strategy, seed, args.budget)
                            .map_or(f64::INFINITY, |r| r as f64)
                    })
                    .collect();
                median(runs)
            })
            .collect();
        let (best_index, best) =
            medians[1..]
                .iter()
                .enumerate()
                .fold(
                    (0, f64::INFINITY),
                    |a, (i, &m)| if m < a.1 { (i + 1, m) } else { a },
                );
        best_counts[best_index] += 1;
        let ratio = medians[0] / best;
        ratios.push((program.seed, ratio, strategies[best_index].0));
        if args.verbose {
            let cells: Vec<String> = strategies
                .iter()
                .zip(&medians)
                .map(|((name, _), m)| format!("{name} {m}"))
                .collect();
            println!(
                "seed {:>6}: {}  ratio {ratio:.2}",
                program.seed,
                cells.join(", ")
            );
        }
    }
    let within = ratios.iter().filter(|r| r.1 <= 2.0).count();
    println!(
        "{buggy_programs} buggy programs of {} (seeds {}..{}); default within 2x of the best single strategy on {within}",
        args.programs,
        args.seed,
        args.seed + args.programs - 1
    );
    let finite: Vec<f64> = ratios
        .iter()
        .map(|r| r.1)
        .filter(|r| r.is_finite())
        .collect();
    let geomean = (finite.iter().map(|r| r.ln()).sum::<f64>() / finite.len().max(1) as f64).exp();
    println!(
        "default / best: median {:.2}, geometric mean {geomean:.2}, max {:.2}",
        median(ratios.iter().map(|r| r.1).collect()),
        ratios.iter().map(|r| r.1).fold(0.0, f64::max)
    );
    let names: Vec<String> = strategies[1..]
        .iter()
        .zip(&best_counts[1..])
        .map(|((name, _), n)| format!("{name} {n}"))
        .collect();
    println!("best single strategy (programs): {}", names.join(", "));
    ratios.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
    for (seed, ratio, best) in ratios.iter().filter(|r| r.1 > 2.0).take(15) {
        println!("  over 2x: seed {seed} ratio {ratio:.2} (best {best})");
    }
}
