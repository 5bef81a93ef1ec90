//! Symmetry (`rt::symmetry`, `Model::symmetric_members`) checked against plain search on
//! generated programs: each program of `proggen` made symmetric (its first two or three tasks
//! given the first task's body and declared interchangeable), then explored by plain DFS (the
//! reference: every schedule) and by DFS with visited states by value, which keys a state by its
//! orbit. Both count end states one per orbit (the engine does so for any model that declares
//! members), so the two must reach the same violated invariants, the same violation messages,
//! the same end states, and be exhaustive where the reference is. Under preemption bounds 1
//! and 2 every end state plain DFS reaches must be reached, and the violations must be those of
//! the same search without the declaration: visited states under a bound, by value or by
//! trace, symmetric or not, reach a few violations that plain DFS within the bound does not (seed 576's three copies of one task, bound 1: a lost update leaving `a0`
//! at 5, a real schedule whose preemptions the reduced search counts as 1), an over-report
//! found here and left for its own fix. The same programs explored without the declaration
//! measure what the symmetry saves.
//!
//! Checked with faults put in a copy of the engine: the running task left unrenamed in the
//! visited key under a bound is caught (seed 881, bound 1: a violation and an end state missed); tasks left unrenamed in
//! the fingerprint merge nothing, and the saving check fails.

mod proggen;

use std::sync::Arc;

use proggen::check::{compare, explore, Mode, BOUNDS};
use proggen::{generate, GenOptions, Program};
use sim::strategy::Reduction;

/// Programs tried, from seed 1 on.
const PROGRAMS: u64 = 1500;
/// Plain DFS runs before a program counts as too big to compare.
const BUDGET: u64 = 3000;

/// The program for `seed`, its first `members` tasks given task 0's body and declared
/// interchangeable; `None` if it has too few tasks.
fn symmetric(seed: u64, members: usize) -> Option<Program> {
    let opts = GenOptions {
        max_points: 16,
        ..GenOptions::default()
    };
    let mut program = generate(seed, &opts);
    if program.tasks.len() < members {
        return None;
    }
    let body = program.tasks[0].1.clone();
    for i in 1..members {
        program.tasks[i].1 = body.clone();
    }
    program.members = members;
    Some(program)
}

fn members_for(seed: u64) -> usize {
    match seed % 3 {
        0 => 3,
        _ => 2,
    }
}

/// Per bound: programs compared, mismatches, and runs with and without the declaration.
#[derive(Default, Debug)]
struct Tally {
    compared: usize,
    mismatches: Vec<String>,
    runs_symmetric: u64,
    runs_plain_states: u64,
}

fn run_corpus() -> Vec<Tally> {
    let mut tallies: Vec<Tally> = BOUNDS.iter().map(|_| Tally::default()).collect();
    for seed in 1..=PROGRAMS {
        let members = members_for(seed);
        let Some(program) = symmetric(seed, members) else {
            continue;
        };
        // The same program without the declaration.
        let undeclared = Arc::new(Program {
            members: 0,
            ..program.clone()
        });
        let program = Arc::new(program);
        for (b, bound) in BOUNDS.iter().enumerate() {
            let plain = Mode {
                bound: *bound,
                reduction: Reduction::None,
                visible: false,
            };
            let by_value = Mode {
                bound: *bound,
                reduction: Reduction::VisitedStates,
                visible: true,
            };
            let plain = explore(&program, plain, BUDGET);
            if !plain.exhaustive {
                continue;
            }
            // The reference: plain DFS. Under a bound, visited states reach a few violations
            // plain DFS within the bound does not (see the module docs): there the violations
            // are compared with the same search without the declaration, and every end state
            // plain DFS reaches must be reached.
            let without = explore(&undeclared, by_value, BUDGET * 4);
            let got = explore(&program, by_value, BUDGET * 4);
            let what = match bound {
                None => compare(&plain, &got),
                Some(_) => {
                    let mut what = compare(&without, &got);
                    what.retain(|w| !w.starts_with("end states"));
                    let missing = plain.end_states.difference(&got.end_states).count();
                    if missing > 0 {
                        what.push(format!("{missing} end states of plain DFS missing"));
                    }
                    what
                }
            };
            let tally = &mut tallies[b];
            tally.compared += 1;
            if !what.is_empty() {
                tally.mismatches.push(format!(
                    "seed {seed}: {by_value}: {}\n{program}",
                    what.join("; ")
                ));
            }
            tally.runs_symmetric += got.runs;
            tally.runs_plain_states += without.runs;
        }
    }
    tallies
}

#[test]
fn orbits_reach_what_plain_search_reaches() {
    let tallies = run_corpus();
    for (bound, t) in BOUNDS.iter().zip(&tallies) {
        println!(
            "bound {bound:?}: {} programs compared, {} mismatches; visited states by value: {} \
             runs with the symmetry declared, {} without",
            t.compared,
            t.mismatches.len(),
            t.runs_symmetric,
            t.runs_plain_states
        );
    }
    let mismatches: Vec<&String> = tallies.iter().flat_map(|t| &t.mismatches).collect();
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let unbounded = &tallies[0];
    assert!(unbounded.compared >= 100, "{unbounded:?}");
    // Orbits merge mirror states: the declared search runs fewer schedules.
    assert!(
        unbounded.runs_symmetric * 10 < unbounded.runs_plain_states * 9,
        "{unbounded:?}"
    );
}
