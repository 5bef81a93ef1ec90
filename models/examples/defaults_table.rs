//! Issue 18's table: runs to the first violation with the default plan, random, the portfolio
//! and PCT depth 3, over every scenario in `scenarios/` expected to break, for seeds 1..=N;
//! which proofs the default plan's DFS phase reaches on the scenarios expected to hold; and
//! random's runs/s on the relay and pubsub scenarios at their model's grain and at access grain.
//!
//! ```sh
//! cargo run --release -p models --example defaults_table -- --seeds 20
//! ```
//!
//! Options: `--seeds N` (default 20), `--runs R` (budget per exploration, default 20000),
//! `--only TEXT` (scenarios whose name contains it), `--threads T` (explorations at once, each
//! with one job; default 1), `--no-rate` (skip the runs/s part), `--rate-only` (only it). Runs
//! to the first violation are the runs an exploration with `stop_on_first` counted when it
//! stopped; where `Found::first_run + 1` differs (DFS: it counts the runs its reduction cut
//! short too) both are printed.

use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use sim::explore::Explorer;
use sim::scenario::{Expected, Scenario};
use sim::strategy::StrategyKind;
use sim::{Grain, Model, Monitor};

const STRATEGIES: [(&str, StrategyKind); 4] = [
    ("default", StrategyKind::Default),
    ("random", StrategyKind::Random),
    ("portfolio", StrategyKind::Portfolio),
    ("pct d3", StrategyKind::Pct { depth: 3 }),
];

struct Args {
    seeds: u64,
    runs: u64,
    only: Option<String>,
    threads: usize,
    rate: bool,
    tables: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        seeds: 20,
        runs: 20_000,
        only: None,
        threads: 1,
        rate: true,
        tables: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--no-rate" {
            args.rate = false;
            continue;
        }
        if flag == "--rate-only" {
            args.tables = false;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n = || {
            value
                .parse::<u64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--seeds" => args.seeds = n()?.max(1),
            "--runs" => args.runs = n()?.max(1),
            "--threads" => args.threads = n()?.max(1) as usize,
            "--only" => args.only = Some(value),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(args)
}

/// A model at another grain (relay and pubsub do not let their parameters choose one).
struct AtGrain<'m>(&'m dyn Model, Grain);

impl Model for AtGrain<'_> {
    fn start(&self) -> Rc<dyn Monitor> {
        self.0.start()
    }
    fn grain(&self) -> Grain {
        self.1
    }
    fn reduction_safe(&self) -> bool {
        self.0.reduction_safe()
    }
    fn state_visible(&self) -> bool {
        self.0.state_visible()
    }
}

/// Runs to the first violation for each seed (None: not found within the budget): the runs the
/// exploration counted when it stopped there; `Found::first_run + 1`, which for DFS also counts
/// the runs its reduction cut short; and the invariants found that the scenario does not
/// expect.
struct Row {
    firsts: Vec<Option<u64>>,
    indices: Vec<Option<u64>>,
    unexpected: Vec<String>,
    secs: f64,
}

fn first_violations(
    model: &dyn Model,
    expected: &Expected,
    strategy: StrategyKind,
    args: &Args,
) -> Row {
    let start = Instant::now();
    let mut firsts = Vec::new();
    let mut indices = Vec::new();
    let mut unexpected = Vec::new();
    for seed in 1..=args.seeds {
        let s = Explorer::new(model)
            .strategy(strategy)
            .seed(seed)
            .runs(args.runs)
            .jobs(1)
            .stop_on_first(true)
            .run()
            .unwrap_or_else(|e| panic!("{}: seed {seed}: {e}", strategy.name()));
        let first = s.violations.iter().min_by_key(|f| f.first_run);
        if let Some(f) = first {
            if !expected.matches([f.invariant.as_str()]) && !unexpected.contains(&f.invariant) {
                unexpected.push(f.invariant.clone());
            }
        }
        firsts.push(first.map(|_| s.runs));
        indices.push(first.map(|f| f.first_run + 1));
    }
    Row {
        firsts,
        indices,
        unexpected,
        secs: start.elapsed().as_secs_f64(),
    }
}

/// "median (max)" of the runs to the first violation; a median past the found ones is "not
/// found", and so is a max when any seed missed.
fn cell(firsts: &[Option<u64>]) -> String {
    let mut v: Vec<u64> = firsts.iter().map(|f| f.unwrap_or(u64::MAX)).collect();
    v.sort_unstable();
    let show = |x: u64| match x {
        u64::MAX => "not found".to_string(),
        x => x.to_string(),
    };
    let missed = firsts.iter().filter(|f| f.is_none()).count();
    let median = v[(v.len() - 1) / 2];
    let max = *v.last().expect("at least one seed");
    let mut s = format!("{} ({})", show(median), show(max));
    if missed > 0 && missed < firsts.len() {
        s.push_str(&format!(" {missed} missed"));
    }
    s
}

fn median(firsts: &[Option<u64>]) -> Option<u64> {
    let mut v: Vec<u64> = firsts.iter().map(|f| f.unwrap_or(u64::MAX)).collect();
    v.sort_unstable();
    Some(v[(v.len() - 1) / 2]).filter(|&m| m != u64::MAX)
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("defaults_table: {e}");
            std::process::exit(2);
        }
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let scenarios: Vec<Scenario> = Scenario::load_dir(&dir)
        .expect("scenarios load")
        .into_iter()
        .filter(|s| {
            args.only
                .as_ref()
                .is_none_or(|o| s.name.contains(o.as_str()))
        })
        .collect();
    let built: Vec<(Scenario, Box<dyn Model>)> = scenarios
        .into_iter()
        .map(|s| {
            let model = models::registry::build(&s.model, &s.variant, &s.params)
                .unwrap_or_else(|e| panic!("{}: {e}", s.name));
            (s, model)
        })
        .collect();
    let start = Instant::now();

    if args.tables {
        tables(&args, &built);
    }
    if args.rate {
        rates(&args, &built);
    }
    eprintln!("\ndefaults_table: {:.0}s", start.elapsed().as_secs_f64());
}

/// The runs-to-first-violation table and the proofs table.
fn tables(args: &Args, built: &[(Scenario, Box<dyn Model>)]) {
    // Every (scenario, strategy) pair expected to break, each explored for every seed.
    let jobs: Vec<(usize, usize)> = built
        .iter()
        .enumerate()
        .filter(|(_, (s, _))| matches!(s.expected, Expected::Violation(_)))
        .flat_map(|(i, _)| (0..STRATEGIES.len()).map(move |k| (i, k)))
        .collect();
    let next = AtomicUsize::new(0);
    let rows: Mutex<BTreeMap<(usize, usize), Row>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            scope.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(i, k)) = jobs.get(j) else { break };
                let (scenario, model) = &built[i];
                let row =
                    first_violations(model.as_ref(), &scenario.expected, STRATEGIES[k].1, args);
                eprintln!(
                    "  {} {}: {} in {:.1}s",
                    scenario.name,
                    STRATEGIES[k].0,
                    cell(&row.firsts),
                    row.secs
                );
                rows.lock().expect("no panic").insert((i, k), row);
            });
        }
    });
    let rows = rows.into_inner().expect("no panic");

    println!(
        "Runs to the first violation (runs counted when the exploration stopped at it), median (max) over seeds 1..={}, budget {} runs, one job:",
        args.seeds, args.runs
    );
    println!();
    print!("| scenario |");
    for (name, _) in STRATEGIES {
        print!(" {name} |");
    }
    println!(" default / portfolio |");
    println!("|---|{}---|", "---|".repeat(STRATEGIES.len()));
    let mut notes = Vec::new();
    let mut worse = Vec::new();
    for (i, (scenario, _)) in built.iter().enumerate() {
        if !matches!(scenario.expected, Expected::Violation(_)) {
            continue;
        }
        print!("| {} |", scenario.name);
        for k in 0..STRATEGIES.len() {
            let row = &rows[&(i, k)];
            print!(" {} |", cell(&row.firsts));
            if !row.unexpected.is_empty() {
                notes.push(format!(
                    "{} {}: found {:?}, not expected",
                    scenario.name, STRATEGIES[k].0, row.unexpected
                ));
            }
        }
        let ratio = match (median(&rows[&(i, 0)].firsts), median(&rows[&(i, 2)].firsts)) {
            (Some(d), Some(p)) => {
                let r = d as f64 / p as f64;
                if r > 2.0 {
                    worse.push(scenario.name.clone());
                }
                format!("{r:.2}")
            }
            (None, Some(_)) => {
                worse.push(scenario.name.clone());
                "not found".to_string()
            }
            (_, None) => "-".to_string(),
        };
        println!(" {ratio} |");
    }
    for n in &notes {
        println!("\nnote: {n}");
    }
    println!();
    println!("Where `Found::first_run + 1` differs (it counts DFS runs the reduction cut short):");
    for (&(i, k), row) in &rows {
        if row.firsts != row.indices {
            println!(
                "  {} {}: first_run + 1 {}",
                built[i].0.name,
                STRATEGIES[k].0,
                cell(&row.indices)
            );
        }
    }
    println!();
    println!(
        "default more than 2x worse than the portfolio (median): {}",
        if worse.is_empty() {
            "none".to_string()
        } else {
            worse.join(", ")
        }
    );

    // Proofs: the default plan on the scenarios expected to hold (one seed: its DFS phase is
    // deterministic).
    println!();
    println!(
        "Scenarios expected to hold: what the default plan's DFS proved, taking turns with the portfolio ({} runs):",
        args.runs
    );
    println!();
    println!("| scenario | proof | DFS runs | sampled runs | found | secs |");
    println!("|---|---|---|---|---|---|");
    for (scenario, model) in built {
        if scenario.expected != Expected::Holds {
            continue;
        }
        let t = Instant::now();
        let s = Explorer::new(model.as_ref())
            .strategy(StrategyKind::Default)
            .seed(1)
            .runs(args.runs)
            .jobs(1)
            .run()
            .unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
        let plan = s.plan.expect("the default strategy reports its plan");
        let proof = match (plan.exhaustive, plan.proved_bound) {
            (true, _) => "exhaustive".to_string(),
            (false, Some(k)) => format!("within {k} preemptions"),
            (false, None) => "none".to_string(),
        };
        let found: Vec<&str> = s.violations.iter().map(|f| f.invariant.as_str()).collect();
        println!(
            "| {} | {proof} | {} | {} | {} | {:.1} |",
            scenario.name,
            plan.dfs_runs,
            plan.sample_runs,
            if found.is_empty() {
                "-".to_string()
            } else {
                found.join(", ")
            },
            t.elapsed().as_secs_f64()
        );
    }
}

/// Random's runs/s on the relay and pubsub scenarios, at the model's grain and at access grain.
fn rates(args: &Args, built: &[(Scenario, Box<dyn Model>)]) {
    {
        println!();
        println!(
            "Random, {} runs per scenario (all of them, no stop), runs/s at the model's grain and at access grain:",
            args.runs
        );
        println!();
        println!("| model | scenarios | model's grain | runs/s there | runs/s at access | access / model's |");
        println!("|---|---|---|---|---|---|");
        for family in ["relay", "pubsub"] {
            let mut totals = [(0u64, 0f64); 2];
            let mut grains = Vec::new();
            let mut count = 0;
            for (scenario, model) in built {
                if scenario.model != family {
                    continue;
                }
                count += 1;
                let own = model.grain();
                if !grains.contains(&own.name()) {
                    grains.push(own.name());
                }
                let access = AtGrain(model.as_ref(), Grain::Access);
                let at: [&dyn Model; 2] = [model.as_ref(), &access];
                for (g, m) in at.into_iter().enumerate() {
                    let s = Explorer::new(m)
                        .strategy(StrategyKind::Random)
                        .seed(1)
                        .runs(args.runs)
                        .jobs(1)
                        .run()
                        .unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
                    totals[g].0 += s.runs;
                    totals[g].1 += s.elapsed.as_secs_f64();
                }
            }
            if count == 0 {
                continue;
            }
            let rate = |(runs, secs): (u64, f64)| runs as f64 / secs;
            println!(
                "| {family} | {count} | {} | {:.0} | {:.0} | {:.2} |",
                grains.join(", "),
                rate(totals[0]),
                rate(totals[1]),
                rate(totals[1]) / rate(totals[0])
            );
        }
    }
}
