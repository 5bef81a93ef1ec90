//! Reduction on user tests (issue 30, item 2): the engine's differential test, written as user
//! tests. Each generated program of `sim/tests/proggen` (atomics, mutexes, rwlocks, bounded
//! channels, notifies, `choose`, loops, spawns from tasks) runs as the body of a
//! `braid::check`: its tasks spawned from the test's main task, stackful as a user's are, its
//! invariants watched as a user's `Log` is, and the final values of its atomics and mutexes the
//! run's outcome. DFS with the reduction a user test now gets by default (visited states,
//! identified by trace) must reach exactly the outcomes plain DFS reaches, and the same verdict,
//! on every program whose plain search finishes. `BRAID_DIFF_PROGRAMS` sets how many (from seed
//! 1; default 150).

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
use proggen::{generate, GenOptions, Program};
use reach::{reach, Reached};

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
    reach(&name, strategy, BUDGET, move || {
        let p = p.clone();
        async move { p.run_as_test().await }
    })
}

#[test]
fn reduced_dfs_on_user_tests_reaches_what_plain_dfs_reaches() {
    let programs: u64 = std::env::var("BRAID_DIFF_PROGRAMS").map_or(150, |s| s.parse().unwrap());
    let opts = GenOptions::default();
    let (mut compared, mut plain_runs, mut reduced_runs) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for seed in 1..=programs {
        let program = Arc::new(generate(seed, &opts));
        let plain = search(&program, Reduction::None);
        if !plain.finished {
            continue;
        }
        let reduced = search(&program, Reduction::VisitedStates);
        compared += 1;
        if plain.failed.is_some() || reduced.failed.is_some() {
            // A failing search stops at its first violation: the verdicts must agree.
            if plain.failed.is_some() != reduced.failed.is_some() {
                mismatches.push(format!(
                    "seed {seed}: plain DFS {:?}, reduced {:?}\n{program}",
                    plain.failed, reduced.failed
                ));
            }
            continue;
        }
        plain_runs += plain.runs;
        reduced_runs += reduced.runs;
        if !reduced.finished || reduced.outcomes != plain.outcomes {
            let missed: Vec<_> = plain.outcomes.difference(&reduced.outcomes).collect();
            mismatches.push(format!(
                "seed {seed}: reduced finished {}, missed {missed:?}\n{program}",
                reduced.finished
            ));
        }
    }
    eprintln!(
        "{compared} of {programs} programs compared; holding ones: plain DFS {plain_runs} runs, \
         reduced {reduced_runs}"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(
        compared >= programs / 2,
        "only {compared} programs compared"
    );
    assert!(
        reduced_runs < plain_runs,
        "{reduced_runs} >= {plain_runs}: nothing reduced"
    );
}
