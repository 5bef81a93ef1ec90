//! The reduction audit: a reduced DFS claims that the schedules it pruned reach nothing the
//! explored ones do not. That rests on the model's declarations (`Model::reduction_safe`: every
//! shared value goes through engine objects; `Model::state_visible`: and each checkpoint names
//! every local), which the engine cannot see being broken — a `RefCell` shared between tasks,
//! a loop local left out of a checkpoint. So after the search, a seeded sample of the pruned
//! branches is explored again by plain DFS, and any end state or violation the reduced search
//! did not reach is a miss: the proof does not stand.

use std::collections::BTreeSet;

use crate::model::Model;
use crate::run::{run_once, RunConfig, RunOutcome, RunResult};
use crate::strategy::{Branch, Dfs, Reduction, Scheduler};

/// Plain-DFS runs spent below each sampled branch, unless the explorer says otherwise (most
/// subtrees are far smaller).
pub const RUNS_PER_BRANCH: u64 = 250;

/// The plain-DFS runs an audit may make: below each branch, and in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditRuns {
    /// Below each audited branch.
    pub per_branch: u64,
    /// In all (the branches after it is spent are left unaudited).
    pub total: u64,
}

impl Default for AuditRuns {
    fn default() -> Self {
        AuditRuns {
            per_branch: RUNS_PER_BRANCH,
            total: u64::MAX,
        }
    }
}

/// What the audit did and found.
#[derive(Clone, Debug)]
pub struct AuditReport {
    /// Branches the reduction pruned, and how many of them were re-explored.
    pub pruned: u64,
    /// Pruned branches re-explored (a seeded sample of `pruned`, as far as the budget went).
    pub audited: usize,
    /// Audited branches whose whole subtree was explored (the others hit the runs per branch).
    pub complete: usize,
    /// Plain-DFS runs the audit made below the sampled branches.
    pub runs: u64,
    /// Runs below a pruned branch that reached what the reduced search never did.
    pub misses: Vec<Miss>,
}

/// A run below a pruned branch that reached an end state or violation the reduced search never
/// reached: the reduction, or the model's declarations, are unsound.
#[derive(Clone, Debug)]
pub struct Miss {
    /// What the reduced search did not reach, in words.
    pub what: String,
    /// The run that reached it (a violation's run replays to that violation).
    pub run: RunResult,
}

impl AuditReport {
    /// Whether the audit found nothing the reduced search missed.
    pub fn passed(&self) -> bool {
        self.misses.is_empty()
    }
}

/// Re-explores the `sample` of the `pruned` branches a reduced search pruned, within `budget`,
/// looking for a violation of an invariant not in
/// `found` or an end state not in `end_states` (what the search reached; see the module docs).
/// Takes them as they are, so the explorer (which holds them in its `Summary`) sits above the
/// audit, not beside it.
pub fn audit(
    model: &dyn Model,
    (sample, pruned): (&[Branch], u64),
    found: &BTreeSet<&str>,
    end_states: &BTreeSet<u64>,
    max_steps: usize,
    budget: AuditRuns,
) -> AuditReport {
    let config = RunConfig {
        max_steps,
        trace: false,
        record_accesses: false,
    };
    let mut report = AuditReport {
        pruned,
        audited: 0,
        complete: 0,
        runs: 0,
        misses: Vec::new(),
    };
    let mut missed: BTreeSet<String> = BTreeSet::new();
    for branch in sample {
        if report.runs >= budget.total {
            break;
        }
        let mut dfs = Dfs::new(branch.bound, Reduction::None);
        if model.state_visible() {
            dfs = dfs.by_value();
        }
        let mut strategy: Box<dyn Scheduler> = Box::new(dfs.below(branch));
        let mut runs = 0;
        let limit = budget.per_branch.min(budget.total - report.runs);
        while !strategy.progress().exhausted && runs < limit {
            let (r, s) = run_once(model, strategy, runs, &config);
            strategy = s;
            runs += 1;
            let what = match &r.outcome {
                RunOutcome::Violation(v) if !found.contains(v.invariant.as_str()) => {
                    format!("violation {}: {}", v.invariant, v.message)
                }
                RunOutcome::Holds if !end_states.contains(&r.end_state) => {
                    format!("end state {:016x}", r.end_state)
                }
                _ => continue,
            };
            if missed.insert(what.clone()) {
                report.misses.push(Miss { what, run: r });
            }
        }
        report.runs += runs;
        report.audited += 1;
        report.complete += usize::from(strategy.progress().exhausted);
    }
    report
}
