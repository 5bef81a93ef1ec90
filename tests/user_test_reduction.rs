//! Reduction on user tests (issue 30, item 2): the engine's differential test, written as user
//! tests. Each generated program of `sim/tests/proggen` (atomics, mutexes, rwlocks, bounded
//! channels, notifies, `choose`, loops, spawns from tasks) runs as the body of a
//! `braid::check`: its tasks spawned from the test's main task, stackful as a user's are, its
//! invariants watched as a user's `Log` is, and the final values of its atomics and mutexes the
//! run's outcome. DFS with the reduction a user test now gets by default (visited states,
//! identified by trace) must reach exactly the outcomes plain DFS reaches, and the same verdict,
//! on every program whose plain search finishes. `BRAID_DIFF_PROGRAMS` sets how many (from seed
//! 1; default 150).
//!
//! The same with fair yields (`GenOptions::spin`: `yield_now` statements and spin-waits on
//! flags, some built to livelock): a run that yields fairly keeps the reduction without sleep
//! sets, a state identified by its trace and by whom each task in a fair yield still waits
//! for. The programs that yield are compared (`BRAID_DIFF_FAIR_PROGRAMS`, default 300 seeds),
//! with runs cut at `SPIN_MAX_STEPS`.

// The engine's own generator, as its tests build it. Its `is_multiple_of` is newer than the
// workspace's rust-version, and fine on the pinned toolchain (rust-toolchain.toml).
#[path = "../sim/tests/proggen/mod.rs"]
#[allow(clippy::incompatible_msrv)]
mod proggen;

#[path = "support/reach.rs"]
mod reach;

use std::sync::Arc;

use braid::engine::strategy::Reduction;
use braid::Strategy;
use proggen::{generate, GenOptions, Program, SPIN_MAX_STEPS};
use reach::{reach_steps, Reached};

/// Plain DFS runs before a program counts as too big to compare.
const BUDGET: u64 = 3_000;

/// Unbounded DFS of `program` as a user test, with `reduction`: each completed run's final
/// values.
fn search(program: &Arc<Program>, reduction: Reduction) -> Reached<Vec<usize>> {
    let p = program.clone();
    let strategy = Strategy::Dfs {
        preemption_bound: None,
        reduction,
    };
    let name = format!("proggen {}", program.seed);
    reach_steps(&name, strategy, BUDGET, program.max_steps(), move || {
        let p = p.clone();
        async move { p.run_as_test().await }
    })
}

/// What the differential found over a range of programs.
#[derive(Default)]
struct Tally {
    compared: u64,
    plain_runs: u64,
    reduced_runs: u64,
    mismatches: Vec<String>,
}

/// Reduced DFS against plain DFS on the programs of `seeds` that `keep` keeps.
fn differential(
    seeds: std::ops::RangeInclusive<u64>,
    opts: &GenOptions,
    keep: impl Fn(&Program) -> bool,
) -> Tally {
    let mut t = Tally::default();
    for seed in seeds {
        let program = Arc::new(generate(seed, opts));
        if !keep(&program) {
            continue;
        }
        let plain = search(&program, Reduction::None);
        if !plain.finished {
            continue;
        }
        let reduced = search(&program, Reduction::VisitedStates);
        t.compared += 1;
        if plain.failed.is_some() || reduced.failed.is_some() {
            // A failing search stops at its first violation: the verdicts must agree.
            if plain.failed.is_some() != reduced.failed.is_some() {
                t.mismatches.push(format!(
                    "seed {seed}: plain DFS {:?}, reduced {:?}\n{program}",
                    plain.failed, reduced.failed
                ));
            }
            continue;
        }
        t.plain_runs += plain.runs;
        t.reduced_runs += reduced.runs;
        if !reduced.finished || reduced.outcomes != plain.outcomes {
            let missed: Vec<_> = plain.outcomes.difference(&reduced.outcomes).collect();
            t.mismatches.push(format!(
                "seed {seed}: reduced finished {}, missed {missed:?}\n{program}",
                reduced.finished
            ));
        }
    }
    t
}

impl Tally {
    /// No mismatch, at least `least` programs compared, and the reduction saved runs.
    fn assert_agrees(&self, least: u64) {
        assert!(self.mismatches.is_empty(), "{}", self.mismatches.join("\n"));
        assert!(
            self.compared >= least,
            "only {} programs compared",
            self.compared
        );
        assert!(
            self.reduced_runs < self.plain_runs,
            "{} >= {}: nothing reduced",
            self.reduced_runs,
            self.plain_runs
        );
    }
}

#[test]
fn reduced_dfs_on_user_tests_reaches_what_plain_dfs_reaches() {
    let programs: u64 = std::env::var("BRAID_DIFF_PROGRAMS").map_or(150, |s| s.parse().unwrap());
    let t = differential(1..=programs, &GenOptions::default(), |_| true);
    eprintln!(
        "{} of {programs} programs compared; holding ones: plain DFS {} runs, reduced {}",
        t.compared, t.plain_runs, t.reduced_runs
    );
    t.assert_agrees(programs / 2);
}

#[test]
fn reduced_dfs_on_user_tests_that_yield_fairly_reaches_what_plain_dfs_reaches() {
    let seeds: u64 = std::env::var("BRAID_DIFF_FAIR_PROGRAMS").map_or(300, |s| s.parse().unwrap());
    let opts = GenOptions {
        spin: true,
        ..GenOptions::default()
    };
    let t = differential(1..=seeds, &opts, Program::yields);
    eprintln!(
        "{} programs that yield compared (of {seeds} seeds, runs cut at {SPIN_MAX_STEPS} \
         steps); holding ones: plain DFS {} runs, reduced {}",
        t.compared, t.plain_runs, t.reduced_runs
    );
    t.assert_agrees(seeds / 4);
}
