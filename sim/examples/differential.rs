//! The differential test of DFS reductions at scale: generates programs from consecutive seeds,
//! explores each with plain DFS and every reduction (see `sim/tests/proggen`), and lists every
//! mismatch with its seed.
//!
//! ```sh
//! cargo run --release -p sim --example differential -- --programs 20000 --seed 1
//! cargo run --release -p sim --example differential -- --programs 1 --seed 1234 --show 1
//! ```
//!
//! Options: `--programs N` (default 1000), `--seed S` (the first seed, default 1), `--budget R`
//! (plain DFS runs per bound before a program counts as too big, default 5000), `--no-spawns`
//! (generate no spawns from tasks), `--no-choose` (no `choose`), `--spin` (fair yields:
//! `yield_now`, spin-waits in random programs, and the spin-wait template; programs that yield
//! run with a step bound of 200, and are also explored by plain DFS by value), `--max-points P` (scheduling points per program, default
//! 11), `--jobs J` (threads, default 1), `--show K` (print the programs of the first K
//! mismatching seeds, default 3), `--list K` (seeds listed per kind of mismatch, default 20),
//! `--verbose` (a line per program, on stderr). Diagnostics, to tell kinds of mismatch apart:
//! `--single-spawner` (at most one task of a random program spawns), `--no-stop` (broken
//! invariants only record their messages, no run ends at a violation).

#[path = "../tests/proggen/mod.rs"]
mod proggen;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use proggen::check::{check_program, Mismatch, Report, Verdict};
use proggen::{generate, GenOptions, Program, Shape};

struct Args {
    programs: u64,
    seed: u64,
    budget: u64,
    opts: GenOptions,
    jobs: u64,
    show: usize,
    list: usize,
    verbose: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        programs: 1000,
        seed: 1,
        budget: 5000,
        opts: GenOptions::default(),
        jobs: 1,
        show: 3,
        list: 20,
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--no-spawns" {
            args.opts.spawns = false;
            continue;
        }
        if flag == "--single-spawner" {
            args.opts.single_spawner = true;
            continue;
        }
        if flag == "--spin" {
            args.opts.spin = true;
            continue;
        }
        if flag == "--no-choose" {
            args.opts.choose = false;
            continue;
        }
        if flag == "--no-stop" {
            args.opts.stop = false;
            continue;
        }
        if flag == "--verbose" {
            args.verbose = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let n: u64 = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
        match flag.as_str() {
            "--programs" => args.programs = n,
            "--seed" => args.seed = n,
            "--budget" => args.budget = n,
            "--max-points" => args.opts.max_points = n as usize,
            "--jobs" => args.jobs = n.max(1),
            "--show" => args.show = n as usize,
            "--list" => args.list = n as usize,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(args)
}

/// A kind of mismatch: the mode, what differs, and the program's shape.
fn kind(m: &Mismatch, shape: Shape) -> String {
    let aspects: Vec<&str> = m
        .what
        .iter()
        .map(|w| w.split(':').next().unwrap_or(w))
        .collect();
    format!("{} | {} | {shape:?}", m.mode, aspects.join(" + "))
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("differential: {e}");
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    let next = AtomicU64::new(0);
    let results: Mutex<Vec<(Arc<Program>, Report)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= args.programs {
                    break;
                }
                let program = Arc::new(generate(args.seed + i, &args.opts));
                if args.verbose {
                    eprint!("{program}");
                }
                let t = Instant::now();
                let report = check_program(&program, args.budget);
                if args.verbose {
                    eprintln!(
                        "  seed {} {:?}: {} points, {} runs, {} compared, {} too big, {} mismatches, {:.0} ms",
                        program.seed,
                        program.shape,
                        proggen::points(&program),
                        report.runs,
                        report.compared,
                        report.too_big,
                        report.mismatches.len(),
                        t.elapsed().as_secs_f64() * 1000.0
                    );
                }
                let mut all = results.lock().expect("no job panics holding the lock");
                all.push((program, report));
                let done = all.len();
                if done.is_multiple_of(1000) {
                    eprintln!(
                        "  {done} programs, {:.1}s",
                        start.elapsed().as_secs_f64()
                    );
                }
            });
        }
    });
    let elapsed = start.elapsed();
    let mut results = results.into_inner().expect("no job panicked");
    results.sort_by_key(|(p, _)| p.seed);

    let mut runs = 0;
    let mut too_big = 0;
    let mut compared = 0;
    let mut verdicts: BTreeMap<String, u64> = BTreeMap::new();
    let mut shapes: BTreeMap<String, u64> = BTreeMap::new();
    let mut deadlocks = 0;
    let mut step_bounds = 0;
    let mut livelocks = 0;
    let mut kinds: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut bad_seeds: Vec<u64> = Vec::new();
    for (program, report) in &results {
        runs += report.runs;
        too_big += report.too_big;
        compared += report.compared;
        *shapes.entry(format!("{:?}", program.shape)).or_default() += 1;
        let verdict = match report.verdict {
            Some(Verdict::Holds) => "holds",
            Some(Verdict::ScheduleDependent) => "schedule-dependent violation",
            Some(Verdict::AlwaysFails) => "violation in every run",
            None => "too big unbounded",
        };
        *verdicts.entry(verdict.into()).or_default() += 1;
        deadlocks += u64::from(report.deadlocks);
        step_bounds += report.step_bounds;
        livelocks += u64::from(program.livelocks);
        if !report.mismatches.is_empty() {
            bad_seeds.push(program.seed);
        }
        for m in &report.mismatches {
            kinds
                .entry(kind(m, program.shape))
                .or_default()
                .push(m.seed);
        }
    }
    let secs = elapsed.as_secs_f64();
    println!(
        "differential: {} programs (seeds {}..{}), {} jobs, in {secs:.1}s ({:.0} programs/s, {runs} runs, {:.0} runs/s)",
        results.len(),
        args.seed,
        args.seed + args.programs,
        args.jobs,
        results.len() as f64 / secs,
        runs as f64 / secs
    );
    println!(
        "  bounds compared {compared}, skipped as too big {too_big} (budget {} plain runs)",
        args.budget
    );
    println!("  shapes: {shapes:?}");
    println!("  unbounded verdicts: {verdicts:?}; programs that can deadlock: {deadlocks}");
    if args.opts.spin {
        println!(
            "  programs built to livelock: {livelocks}; references that said step-bound for a livelock: {step_bounds}"
        );
    }
    let total: usize = kinds.values().map(Vec::len).sum();
    println!(
        "  mismatches: {total} in {} programs, {} kinds",
        bad_seeds.len(),
        kinds.len()
    );
    for (kind, seeds) in &kinds {
        let shown: Vec<String> = seeds.iter().take(args.list).map(u64::to_string).collect();
        println!(
            "    {} x {kind}\n      seeds {}{}",
            seeds.len(),
            shown.join(" "),
            if seeds.len() > args.list { " ..." } else { "" }
        );
    }
    for (program, report) in results
        .iter()
        .filter(|(_, r)| !r.mismatches.is_empty())
        .take(args.show)
    {
        println!();
        print!("{program}");
        for m in &report.mismatches {
            println!("  MISMATCH {m}");
        }
    }
    if total > 0 {
        std::process::exit(1);
    }
}
