//! The checker checks itself: a few hundred small random concurrent programs (`proggen`), each
//! explored by plain DFS — the reference — and by every reduction (partial-order; visited states
//! identified by trace, and by value on the same program declaring `state_visible`), unbounded
//! and under preemption bounds 1 and 2 (plain DFS under the same bound the reference). Each
//! reduction must reach the same violated invariants, the same violation messages, the same end
//! states, and be exhaustive where the reference is.
//!
//! The checks are split by reduction, and the programs into two corpora — the full generator,
//! and programs without spawns from tasks or `choose` — so that each failing test names the
//! engine bugs that make it fail:
//!
//! 1. partial-order reduction (sleep sets + source-set DPOR, and Bounded POR) analyses races
//!    between executed steps only: the pending operation of a task that never ran it — because
//!    a violation ended the run, or because the task was blocked when the run ended — is never
//!    raced against, so reversals that would enable it are missed
//!    (`partial_order_misses_a_task_a_violation_cut_short`,
//!    `partial_order_misses_a_race_with_a_blocked_task` in `soundness.rs`);
//! 2. visited states by value do not see what a spawned task captured: a child's local state
//!    starts at zero whatever values it holds (`spawn_capture_visited_states`);
//! 3. tasks are numbered in spawn order, but a spawn accesses nothing: two spawns by different
//!    tasks count as independent, and reordering them renumbers the children, so the reductions
//!    reach end states (keyed by task number) only in one numbering
//!    (`spawn_order_renumbers_tasks`);
//! 4. sleep sets (partial-order reduction, and visited states without a bound) put a task to
//!    sleep with the accesses its step made when first explored, but a step that draws a
//!    `choose` makes different accesses for different values: the task sleeps through steps that
//!    conflict with another value's (`sleep_sets_take_a_choose_step_for_one_value`).
//!
//! A failure prints every mismatch with the program's seed, the mode, what differs, and the
//! program; `cargo run --release -p sim --example differential -- --programs 1 --seed S
//! --budget 2000 --show 1` (with `--no-spawns --no-choose` for the smaller corpus) reproduces
//! one.

mod proggen;

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use proggen::check::{check_mode, reference, Mismatch, Mode, Outcome, BOUNDS};
use proggen::{generate, GenOptions, Program};
use sim::strategy::Reduction;

/// Programs per corpus, from seed 1 on.
const FULL: u64 = 800;
const PLAIN: u64 = 400;
/// Plain DFS runs per bound before a program counts as too big to compare under that bound.
const BUDGET: u64 = 2000;

/// Mismatches the engine is known to have, by corpus (full, then without spawns or
/// `choose`): seeds on which unbounded partial-order reduction (sleep sets + source-set DPOR)
/// disagrees with plain DFS. Seed 175 (in both corpora) is a missed violation: `counts-a0`
/// breaks when t2's `fetch_add` runs before t0's `store` and t0's `send` is not blocked by
/// t1's `try_send`, and DPOR never explores that order. The others miss end states, in
/// programs where runs end at a violation (spawns and accept loops). They were hidden until
/// `proggen::check` turned iterative deepening off (before, every "unbounded" search of a
/// small program was a bounded one with visited states) and counted a bounded search that
/// finished as finished (before, a bound that cut anything made the reference "too big").
/// Listed here so that the rest of the corpus guards the reductions; each is still reported.
const KNOWN_PARTIAL_ORDER: [&[u64]; 2] = [
    &[
        21, 43, 93, 142, 156, 175, 186, 351, 409, 445, 451, 550, 630, 692, 781, 784,
    ],
    &[175],
];

fn known(full: bool, m: &Mismatch) -> bool {
    let corpus = KNOWN_PARTIAL_ORDER[usize::from(!full)];
    m.mode.reduction == Reduction::PartialOrder
        && m.mode.bound.is_none()
        && corpus.contains(&m.seed)
}

/// A program and its references, one per bound of `BOUNDS` (None where plain DFS did not
/// finish within the budget).
struct Case {
    program: Arc<Program>,
    references: Vec<Option<Outcome>>,
}

/// The full generator's programs (`full`), or programs without spawns or `choose`.
fn corpus(full: bool) -> &'static [Case] {
    static CORPORA: [OnceLock<Vec<Case>>; 2] = [OnceLock::new(), OnceLock::new()];
    CORPORA[usize::from(full)].get_or_init(|| {
        let opts = GenOptions {
            spawns: full,
            choose: full,
            ..GenOptions::default()
        };
        let n = if full { FULL } else { PLAIN };
        let start = Instant::now();
        let cases: Vec<Case> = (1..=n)
            .map(|seed| {
                let program = Arc::new(generate(seed, &opts));
                let references = BOUNDS
                    .iter()
                    .map(|&bound| Some(reference(&program, bound, BUDGET)).filter(|r| r.exhaustive))
                    .collect();
                Case {
                    program,
                    references,
                }
            })
            .collect();
        let compared = cases
            .iter()
            .flat_map(|c| &c.references)
            .filter(|r| r.is_some())
            .count();
        eprintln!(
            "corpus ({}): {n} programs, {compared} of {} bounds small enough to compare, references in {:.1}s",
            if full { "full" } else { "no spawns, no choose" },
            cases.len() * BOUNDS.len(),
            start.elapsed().as_secs_f64()
        );
        cases
    })
}

/// Checks every program of the corpus in each of `modes` (under every bound); panics listing
/// every mismatch.
fn differential(full: bool, modes: &[(Reduction, bool)]) {
    let cases = corpus(full);
    let start = Instant::now();
    let mut mismatches: Vec<(&Case, Mismatch)> = Vec::new();
    let mut checks = 0;
    for case in cases {
        for (bound, reference) in BOUNDS.iter().zip(&case.references) {
            let Some(reference) = reference else {
                continue;
            };
            for &(reduction, visible) in modes {
                let mode = Mode {
                    bound: *bound,
                    reduction,
                    visible,
                };
                checks += 1;
                if let (_, Some(m)) = check_mode(&case.program, reference, mode, BUDGET) {
                    mismatches.push((case, m));
                }
            }
        }
    }
    eprintln!(
        "{checks} checks of {} programs in {:.1}s",
        cases.len(),
        start.elapsed().as_secs_f64()
    );
    let (known, mismatches): (Vec<_>, Vec<_>) =
        mismatches.into_iter().partition(|(_, m)| known(full, m));
    for (_, m) in &known {
        eprintln!("known engine mismatch (KNOWN_PARTIAL_ORDER): {m}");
    }
    if mismatches.is_empty() {
        return;
    }
    let mut report = format!(
        "{} of {checks} checks disagree with plain DFS:\n",
        mismatches.len()
    );
    for (_, m) in &mismatches {
        report.push_str(&format!("  {m}\n"));
    }
    let mut shown: Vec<u64> = Vec::new();
    for (case, _) in &mismatches {
        if shown.len() == 6 {
            report.push_str("  (further programs: see the seeds above)\n");
            break;
        }
        if !shown.contains(&case.program.seed) {
            shown.push(case.program.seed);
            report.push_str(&format!("\n{}", case.program));
        }
    }
    let flag = if full { "" } else { " --no-spawns --no-choose" };
    report.push_str(&format!(
        "\nreproduce one: cargo run --release -p sim --example differential -- --programs 1 --seed SEED --budget {BUDGET}{flag} --show 1\n"
    ));
    panic!("{report}");
}

const PARTIAL_ORDER: (Reduction, bool) = (Reduction::PartialOrder, false);
const BY_TRACE: (Reduction, bool) = (Reduction::VisitedStates, false);
const BY_VALUE: (Reduction, bool) = (Reduction::VisitedStates, true);

/// Passes on the engine as it is: the regression guard for visited states.
#[test]
fn visited_states_agree_with_plain_dfs_without_spawns_or_choose() {
    differential(false, &[BY_TRACE, BY_VALUE]);
}

/// Passes but for the seeds in `KNOWN_PARTIAL_ORDER`.
#[test]
fn partial_order_agrees_with_plain_dfs_without_spawns_or_choose() {
    differential(false, &[PARTIAL_ORDER]);
}

/// Guards against bugs 3 (spawn order renumbers tasks) and 4 (a choose step
/// sleeps with one value's accesses).
#[test]
fn visited_states_by_trace_agree_with_plain_dfs() {
    differential(true, &[BY_TRACE]);
}

/// Guards against bugs 2 (a spawned task's captured values are not in its
/// state), 3 and 4.
#[test]
fn visited_states_by_value_agree_with_plain_dfs() {
    differential(true, &[BY_VALUE]);
}

/// Passes but for the seeds in `KNOWN_PARTIAL_ORDER`.
#[test]
fn partial_order_agrees_with_plain_dfs() {
    differential(true, &[PARTIAL_ORDER]);
}

/// The generator is deterministic: a seed names one program.
#[test]
fn a_seed_names_one_program() {
    for seed in [1, 7, 12, 1234] {
        let opts = GenOptions::default();
        assert_eq!(
            generate(seed, &opts).to_string(),
            generate(seed, &opts).to_string()
        );
    }
}
