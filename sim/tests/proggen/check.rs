//! The differential check: a generated program explored by plain DFS (the reference) and by
//! every reduction, with and without a preemption bound; each reduction must reach the same
//! violated invariants, the same violation messages (of the generated invariants: the engine's
//! own, such as a deadlock, are compared by name), the same end states, and be exhaustive where
//! the reference is.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use sim::explore::Explorer;
use sim::strategy::{Reduction, StrategyKind};

use super::{clear_messages, take_messages, GenModel, Program};

/// One exploration: DFS with a bound and a reduction, on the model declaring `state_visible`
/// or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    pub bound: Option<usize>,
    pub reduction: Reduction,
    pub visible: bool,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = match self.bound {
            Some(b) => format!("preemption bound {b}"),
            None => "unbounded".to_string(),
        };
        write!(f, "dfs {bound}, reduction {}", self.reduction.name())?;
        if self.reduction == Reduction::None && self.visible {
            write!(f, " (by value: state_visible = true)")?;
        } else if self.reduction == Reduction::VisitedStates {
            let by = if self.visible { "value" } else { "trace" };
            write!(f, " (states by {by}: state_visible = {})", self.visible)?;
        }
        Ok(())
    }
}

/// The bounds every program is explored under.
pub const BOUNDS: [Option<usize>; 3] = [None, Some(1), Some(2)];

/// The reductions compared with plain DFS under each bound. (`state_visible` changes only what
/// visited states are identified by: partial-order reduction ignores it.)
pub const REDUCTIONS: [(Reduction, bool); 3] = [
    (Reduction::PartialOrder, false),
    (Reduction::VisitedStates, false),
    (Reduction::VisitedStates, true),
];

/// The explorations compared with plain DFS for `program`: `REDUCTIONS`, and where it yields
/// fairly, plain DFS by value too (it watches its path for a repeated state: a livelock if the
/// cycle is fair, where plain DFS by trace runs on to the step bound).
pub fn modes(program: &Program) -> Vec<(Reduction, bool)> {
    let mut modes = REDUCTIONS.to_vec();
    if program.yields() {
        modes.push((Reduction::None, true));
    }
    modes
}

/// What one exploration reached.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub invariants: BTreeSet<String>,
    pub messages: BTreeSet<String>,
    pub end_states: BTreeSet<u64>,
    /// The search finished: every schedule, or under a bound every one within it.
    pub exhaustive: bool,
    /// Some run was reported as `step-bound` (counted as `livelock` in a program that yields).
    pub step_bound: bool,
    pub runs: u64,
    /// Runs that broke an invariant.
    pub violating_runs: u64,
}

/// Explores `program` in `mode`, at most `budget` runs.
pub fn explore(program: &Arc<Program>, mode: Mode, budget: u64) -> Outcome {
    let model = GenModel {
        program: program.clone(),
        visible: mode.visible,
    };
    clear_messages();
    let mut explorer = Explorer::new(&model)
        .strategy(StrategyKind::Dfs {
            preemption_bound: mode.bound,
            reduction: mode.reduction,
        })
        .runs(budget)
        // Partial-order reduction is not offered, but measured here.
        .experimental_partial_order(true)
        // One search with the mode's reduction: with a budget, an unbounded DFS would deepen
        // by default (bounded levels, with visited states for any reduction).
        .deepening(false);
    if let Some(steps) = program.max_steps() {
        explorer = explorer.max_steps(steps);
    }
    let s = explorer
        .run()
        .unwrap_or_else(|e| panic!("seed {}: {mode}: {e}\n{program}", program.seed));
    let finished = s.finished();
    let step_bound = s.violations.iter().any(|f| f.invariant == "step-bound");
    let mut invariants: BTreeSet<String> =
        s.violations.iter().map(|f| f.invariant.clone()).collect();
    if program.yields() && invariants.remove("step-bound") {
        // The engine names a fair run past the bound `livelock` only while some task waits in
        // a fair yield for another: a lone spinner (the others finished or blocked) gets
        // `step-bound`, where DFS by value sees the same cycle as a `livelock`. Compared as
        // one; counted in `Report::step_bounds`.
        invariants.insert("livelock".to_string());
    }
    Outcome {
        invariants,
        step_bound,
        messages: take_messages(),
        end_states: s.end_states,
        // Finished: every schedule, or every one within the bound (a bounded search the bound
        // cut reports `proved_bound`, not `exhaustive`).
        exhaustive: finished,
        runs: s.runs,
        violating_runs: s.violations.iter().map(|f| f.count).sum(),
    }
}

/// A reduction that reached something other than plain DFS did.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub seed: u64,
    pub mode: Mode,
    /// What differs, one line per aspect.
    pub what: Vec<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {}: {}: {}",
            self.seed,
            self.mode,
            self.what.join("; ")
        )
    }
}

fn diff<T: Ord + Clone + fmt::Debug>(
    what: &str,
    reference: &BTreeSet<T>,
    got: &BTreeSet<T>,
    show: bool,
) -> Option<String> {
    if reference == got {
        return None;
    }
    let missing: Vec<&T> = reference.difference(got).collect();
    let extra: Vec<&T> = got.difference(reference).collect();
    Some(if show {
        format!("{what}: missing {missing:?}, extra {extra:?}")
    } else {
        format!(
            "{what}: plain DFS {}, reduced {} ({} missing, {} extra)",
            reference.len(),
            got.len(),
            missing.len(),
            extra.len()
        )
    })
}

/// Compares one reduced exploration with the reference.
pub fn compare(reference: &Outcome, got: &Outcome) -> Vec<String> {
    let mut what: Vec<String> = [
        diff(
            "violated invariants",
            &reference.invariants,
            &got.invariants,
            true,
        ),
        diff(
            "violation messages",
            &reference.messages,
            &got.messages,
            true,
        ),
        diff("end states", &reference.end_states, &got.end_states, false),
    ]
    .into_iter()
    .flatten()
    .collect();
    if reference.exhaustive && !got.exhaustive {
        what.push(format!("not exhaustive after {} runs", got.runs));
    }
    what
}

/// How a program's reference exploration went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No run broke an invariant.
    Holds,
    /// Some runs did, some did not.
    ScheduleDependent,
    /// Every run broke one.
    AlwaysFails,
}

/// The result of checking one program.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub mismatches: Vec<Mismatch>,
    /// Bounds under which the reference did not finish within the budget (not compared).
    pub too_big: usize,
    /// Bounds compared.
    pub compared: usize,
    /// Runs, over all explorations.
    pub runs: u64,
    /// The unbounded reference's verdict (if it finished).
    pub verdict: Option<Verdict>,
    /// Whether the unbounded reference found a deadlock.
    pub deadlocks: bool,
    /// References (one per bound) of a program that yields that reported `step-bound` where
    /// a `livelock` was due (see `explore`).
    pub step_bounds: usize,
}

/// Plain DFS of `program` under `bound`: the reference, if it finishes within `budget` runs.
pub fn reference(program: &Arc<Program>, bound: Option<usize>, budget: u64) -> Outcome {
    let plain = Mode {
        bound,
        reduction: Reduction::None,
        visible: false,
    };
    explore(program, plain, budget)
}

/// Explores `program` in `mode` and compares with the (exhaustive) reference.
pub fn check_mode(
    program: &Arc<Program>,
    reference: &Outcome,
    mode: Mode,
    budget: u64,
) -> (u64, Option<Mismatch>) {
    // A reduction may take more runs than plain DFS only under a bound (Bounded POR's
    // conservative backtracking): leave it room.
    let got = explore(program, mode, budget.max(4 * reference.runs));
    let what = compare(reference, &got);
    let mismatch = (!what.is_empty()).then(|| Mismatch {
        seed: program.seed,
        mode,
        what,
    });
    (got.runs, mismatch)
}

/// A program built to livelock (`Program::livelocks`) must be reported as a `livelock` by
/// every search, finished or not: what `got` (explored in `mode`) says about it.
pub fn livelock_reported(program: &Program, mode: Mode, got: &Outcome) -> Option<Mismatch> {
    (program.livelocks && !got.invariants.contains("livelock")).then(|| Mismatch {
        seed: program.seed,
        mode,
        what: vec![format!(
            "livelock not reported (violated invariants {:?}, {} runs, exhaustive {})",
            got.invariants, got.runs, got.exhaustive
        )],
    })
}

/// Explores `program` with plain DFS and every reduction under every bound in `BOUNDS`.
pub fn check_program(program: &Arc<Program>, budget: u64) -> Report {
    let mut report = Report::default();
    for bound in BOUNDS {
        let reference = reference(program, bound, budget);
        report.runs += reference.runs;
        report.step_bounds += usize::from(program.yields() && reference.step_bound);
        let plain = Mode {
            bound,
            reduction: Reduction::None,
            visible: false,
        };
        report
            .mismatches
            .extend(livelock_reported(program, plain, &reference));
        if !reference.exhaustive {
            report.too_big += 1;
            if program.livelocks {
                // Too big to compare, but every search must still say livelock.
                for (reduction, visible) in modes(program) {
                    let mode = Mode {
                        bound,
                        reduction,
                        visible,
                    };
                    let got = explore(program, mode, budget);
                    report.runs += got.runs;
                    report
                        .mismatches
                        .extend(livelock_reported(program, mode, &got));
                }
            }
            continue;
        }
        report.compared += 1;
        if bound.is_none() {
            report.deadlocks = reference.invariants.contains("deadlock");
            report.verdict = Some(match reference.violating_runs {
                0 => Verdict::Holds,
                v if v == reference.runs => Verdict::AlwaysFails,
                _ => Verdict::ScheduleDependent,
            });
        }
        for (reduction, visible) in modes(program) {
            let mode = Mode {
                bound,
                reduction,
                visible,
            };
            let (runs, mismatch) = check_mode(program, &reference, mode, budget);
            report.runs += runs;
            report.mismatches.extend(mismatch);
        }
    }
    report
}
