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
        if self.reduction == Reduction::VisitedStates {
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

/// What one exploration reached.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub invariants: BTreeSet<String>,
    pub messages: BTreeSet<String>,
    pub end_states: BTreeSet<u64>,
    /// The search finished: every schedule, or under a bound every one within it.
    pub exhaustive: bool,
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
    let s = Explorer::new(&model)
        .strategy(StrategyKind::Dfs {
            preemption_bound: mode.bound,
            reduction: mode.reduction,
        })
        .runs(budget)
        // One search with the mode's reduction: with a budget, an unbounded DFS would deepen
        // by default (bounded levels, with visited states for any reduction).
        .deepening(false)
        .run()
        .unwrap_or_else(|e| panic!("seed {}: {mode}: {e}\n{program}", program.seed));
    let finished = s.finished();
    Outcome {
        invariants: s.violations.iter().map(|f| f.invariant.clone()).collect(),
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

/// Explores `program` with plain DFS and every reduction under every bound in `BOUNDS`.
pub fn check_program(program: &Arc<Program>, budget: u64) -> Report {
    let mut report = Report::default();
    for bound in BOUNDS {
        let reference = reference(program, bound, budget);
        report.runs += reference.runs;
        if !reference.exhaustive {
            report.too_big += 1;
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
        for (reduction, visible) in REDUCTIONS {
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
