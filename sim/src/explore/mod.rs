//! Exploration: many runs of one model under one strategy, within a budget of runs and/or
//! time, collecting the first failing run of each invariant. Built like stateright's checker:
//! `Explorer::new(&model).strategy(..).seed(1).runs(20_000).run()`.
//!
//! One idea a file, as stateright's `checker.rs` and `checker/{bfs,dfs,simulation}.rs`: this
//! file is the builder ([`Explorer`]) and its entry points; `search` the single search loop;
//! `deepen` iterative context bounding around it; `parallel` jobs that split it over threads;
//! `adapt` the probing and adapting to the model before and during it; `determinism` the
//! re-check of a run; `summary` what it reports and the merge of parts; `wording` that report
//! in English; `grain` the check a coarse grain owes; `part` where one exploration sits in a
//! larger one (a shard, a job, a level).

mod adapt;
mod deepen;
mod determinism;
mod grain;
mod parallel;
mod part;
mod search;
mod summary;
mod verdict;
mod wording;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

use crate::model::Model;
use crate::run::RunConfig;
use crate::strategy::{Reduction, StrategyKind};

pub use grain::{grain_check, GRAIN_CHECK_RUNS};
pub use summary::{merged_proved_bound, Found, PlanReport, Progress, Summary};
pub use verdict::SearchVerdict;
pub use wording::{every_schedule, preemptions};

use part::Part;

/// Why an exploration stopped without a summary: the model or the engine misbehaved.
#[derive(Debug, Error)]
pub enum ExploreError {
    /// A run's trace digest differed when it was run again (`Explorer::check_determinism`):
    /// the model depends on something the engine does not control.
    #[error("nondeterminism: run {run} gave digest {first:016x}, then {second:016x} ({how})")]
    Nondeterministic {
        /// The run's index.
        run: u64,
        /// Its digest as explored.
        first: u64,
        /// Its digest the second time.
        second: u64,
        /// How it ran the second time: re-run from its seed, or replayed from its decisions.
        how: &'static str,
    },
    /// A run did not follow the decisions its strategy made for it: a bug in the strategy.
    #[error("a run diverged while exploring (strategy bug): {0}")]
    Diverged(crate::Divergence),
}

/// An exploration, configured by its builder methods and started by [`Explorer::run`].
pub struct Explorer<'m> {
    model: &'m dyn Model,
    strategy: StrategyKind,
    seed: u64,
    runs: Option<u64>,
    time: Option<Duration>,
    max_steps: usize,
    check_determinism: bool,
    stop_on_first: bool,
    jobs: usize,
    progress: Option<ProgressFn<'m>>,
    /// The part of a larger search (a shard, a job, a level) this one covers.
    part: Part,
    /// Iterative context bounding for a DFS with no preemption bound (`None`: when a budget is
    /// given).
    deepening: Option<bool>,
    /// Pruned branches to re-explore without reduction after the search (`audit`), the
    /// plain-DFS runs below each, and the least the audit may make in all when they are capped
    /// by the search's own runs (`audit_within`).
    audit: usize,
    audit_per_branch: u64,
    audit_at_least: Option<u64>,
    /// DFS with visited states and without sleep sets (a model that yields fairly, see
    /// `adapt_to`).
    no_sleep_sets: bool,
    /// The default plan's DFS without reduction (a run showed dependencies it does not see:
    /// see `unseen_dependencies`).
    plain_plan: bool,
    /// Run partial-order reduction when asked for it (it is not offered: see `adapt_to_model`),
    /// so that the differential tests keep measuring it.
    experimental_partial_order: bool,
    /// Stop (between runs) once this is set: a Ctrl-C (`cancel_on`).
    cancel: Option<Arc<AtomicBool>>,
}

type ProgressFn<'m> = Box<dyn FnMut(&Progress) + 'm>;

impl<'m> Explorer<'m> {
    /// An exploration of `model`: random strategy, seed 1, no budget (a DFS then runs to its end,
    /// any other strategy makes 10,000 runs), the default step limit.
    pub fn new(model: &'m dyn Model) -> Self {
        Explorer {
            model,
            strategy: StrategyKind::Random,
            seed: 1,
            runs: None,
            time: None,
            max_steps: RunConfig::default().max_steps,
            check_determinism: false,
            stop_on_first: false,
            jobs: 1,
            progress: None,
            part: Part::default(),
            deepening: None,
            audit: 0,
            audit_per_branch: crate::audit::RUNS_PER_BRANCH,
            audit_at_least: None,
            no_sleep_sets: false,
            plain_plan: false,
            experimental_partial_order: false,
            cancel: None,
        }
    }

    /// The strategy that picks which task runs at each scheduling point.
    pub fn strategy(mut self, strategy: StrategyKind) -> Self {
        self.strategy = strategy;
        self
    }

    /// The seed of every random choice: the same seed explores the same runs.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// At most this many runs.
    pub fn runs(mut self, runs: u64) -> Self {
        self.runs = Some(runs);
        self
    }

    /// At most this much wall time, checked after every run.
    pub fn time(mut self, time: Duration) -> Self {
        self.time = Some(time);
        self
    }

    /// Start at run index `first` (a shard of the run space starts past zero).
    pub fn first_run(mut self, first: u64) -> Self {
        self.part.first_run = first;
        self
    }

    /// Take every `stride`-th run index from `first_run` on: shard i of n is
    /// `first_run(i - 1).stride(n)`, and the shards together cover what one exploration would.
    pub fn stride(mut self, stride: u64) -> Self {
        self.part.stride = stride.max(1);
        self
    }

    /// Cut each run after this many steps (a livelock, or a model that never ends).
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Re-run a sample of schedules (fresh and replayed) and fail on any digest difference.
    pub fn check_determinism(mut self, on: bool) -> Self {
        self.check_determinism = on;
        self
    }

    /// Explore with `jobs` threads (random/PCT), each running its own runtimes on every
    /// `jobs`-th run index; the merged result equals a single job's for the same run indices.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// Stop at the first violation (of any invariant) rather than at the end of the budget.
    pub fn stop_on_first(mut self, on: bool) -> Self {
        self.stop_on_first = on;
        self
    }

    /// Iterative context bounding (Musuvathi & Qadeer, PLDI 2007) for a DFS with no preemption
    /// bound: explore every schedule within 0 preemptions, then 1, 2, ..., until a level
    /// finishes without the bound cutting anything (every schedule explored) or the budget runs
    /// out — which then still leaves a statement, "every schedule within k preemptions", and
    /// finds shallow bugs first. On by default when the search has a budget (runs or time):
    /// without one, a single unbounded search is cheaper (no level repeats the one before).
    pub fn deepening(mut self, on: bool) -> Self {
        self.deepening = Some(on);
        self
    }

    /// After a reduced DFS, re-explore a seeded sample of `branches` of the schedules its
    /// reduction pruned, by plain DFS, and report any end state or violation the reduced search
    /// did not reach (`Summary::audit`): a check that the model honours what it declared
    /// (`Model::reduction_safe`, `Model::state_visible`, checkpoints naming every local), and
    /// that the reduction is sound on it.
    pub fn audit(mut self, branches: usize) -> Self {
        self.audit = branches;
        self
    }

    /// An audit (`audit`) of at most `per_branch` plain-DFS runs below each branch (250
    /// unless said), and in all at most as many runs as the search made, or `at_least`: it
    /// costs the search at most double, whatever the size.
    pub fn audit_within(mut self, per_branch: u64, at_least: u64) -> Self {
        self.audit_per_branch = per_branch;
        self.audit_at_least = Some(at_least);
        self
    }

    /// Samples pruned branches as `audit` would, without auditing them here (the levels of a
    /// deepening, the jobs of a parallel search: their caller audits the merged sample).
    fn sampling(mut self, branches: usize) -> Self {
        self.audit = branches;
        self.part.sampling_only = true;
        self
    }

    /// Stops between runs once `flag` is set (by a Ctrl-C handler), returning what was found so
    /// far: a partial summary, never exhaustive, and not audited.
    pub fn cancel_on(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Runs `Reduction::PartialOrder` as asked instead of visited states: for the tests that
    /// measure it against plain DFS (it is not offered, see `Reduction::PartialOrder`).
    pub fn experimental_partial_order(mut self, on: bool) -> Self {
        self.experimental_partial_order = on;
        self
    }

    /// Calls `f` with the progress every few hundred runs and at each new violation.
    pub fn on_progress(mut self, f: impl FnMut(&Progress) + 'm) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Explores, then (with `audit`, after a reduced search that ran to its end, or that
    /// stopped at its first violation and found none) audits the reduction on a sample of what
    /// it pruned. A search stopped by its first violation has nothing to audit: the pruned
    /// branches of a sound reduction reach only what the explored ones did, and a violation is
    /// the verdict already.
    pub fn run(self) -> Result<Summary, ExploreError> {
        let (model, audit, max_steps) = (self.model, self.audit, self.max_steps);
        let (per_branch, at_least) = (self.audit_per_branch, self.audit_at_least);
        let (stop_on_first, sampling_only) = (self.stop_on_first, self.part.sampling_only);
        let cancel = self.cancel.clone();
        let mut summary = self.search()?;
        let cancelled = cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        let reduced = summary.plan.is_some()
            || matches!(
                summary.strategy,
                StrategyKind::Dfs { reduction, .. } if reduction != Reduction::None
            );
        let ran_on = !stop_on_first || summary.violations.is_empty();
        if audit > 0 && reduced && ran_on && !sampling_only && !cancelled {
            let found = summary
                .violations
                .iter()
                .map(|f| f.invariant.as_str())
                .collect();
            let report = crate::audit::audit(
                model,
                (&summary.pruned_sample, summary.pruned_branches),
                &found,
                &summary.end_states,
                max_steps,
                crate::audit::AuditRuns {
                    per_branch,
                    total: at_least.map_or(u64::MAX, |least| least.max(summary.runs)),
                },
            );
            summary.audit = Some(report);
        }
        Ok(summary)
    }

    /// Adapts the strategy to the model, then searches: by deepening levels, by parallel jobs,
    /// or by the one search loop (which starts here again when a run shows the model needs
    /// another adaptation).
    fn search(mut self) -> Result<Summary, ExploreError> {
        self.adapt_to_model();
        if self.deepens() {
            return self.run_deepening();
        }
        if self.jobs > 1 {
            return self.run_parallel();
        }
        self.search_loop()
    }

    /// The run budget (see [`budget_runs`]).
    fn budget_runs(&self) -> Option<u64> {
        budget_runs(self.runs, self.time, self.strategy)
    }
}

/// The run budget of a search given `runs` and `time`: as given, or 10,000 runs for a strategy
/// that is not exhaustive given neither (an exhaustive DFS runs to its end).
pub fn budget_runs(
    runs: Option<u64>,
    time: Option<Duration>,
    strategy: StrategyKind,
) -> Option<u64> {
    match (runs, time) {
        (None, None) if !strategy.is_exhaustive() => Some(10_000),
        (runs, _) => runs,
    }
}

/// How many of run indices `0..runs` fall to shard `index` (1-based) of `count`: those
/// `first_run(index - 1).stride(count)` takes (index - 1, index - 1 + count, ...).
pub fn shard_runs(index: u64, count: u64, runs: u64) -> u64 {
    let first = index - 1;
    match runs > first {
        true => (runs - first).div_ceil(count),
        false => 0,
    }
}
