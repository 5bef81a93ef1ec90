//! The single search loop: run after run of one strategy within the budget, counting what the
//! runs saw and keeping each invariant's first failure. Deepening and parallel jobs are built
//! from explorations that each run this loop; a split DFS (a job, a shard) explores only its
//! own subtrees of the one tree.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{ExploreError, Explorer, Found, PlanReport, Progress, Summary};
use crate::distinct::{Batch, Distinct};
use crate::run::{run_once, RunConfig, RunOutcome, RunResult};
use crate::strategy::{Dfs, Plan, Reduction, Scheduler, Split, StrategyKind};

/// Branching decision nodes above the subtrees a split DFS hands out to jobs and shards.
const SPLIT_DEPTH: usize = 3;

/// What the loop keeps besides the summary's counters: each schedule's digest, and each
/// invariant's first failure (by invariant, in order of first appearance).
struct Tally {
    start: Instant,
    digests: Distinct,
    /// The latest runs' digests, not yet in `digests`.
    batch: Batch,
    found: BTreeMap<String, usize>,
    violations: Vec<Found>,
}

impl Explorer<'_> {
    /// Runs the strategy until it is exhausted, the budget is spent or (with `stop_on_first`)
    /// an invariant breaks. A run that shows the model needs another adaptation (`adapt_to`)
    /// starts the search again.
    pub(super) fn search_loop(mut self) -> Result<Summary, ExploreError> {
        let config = RunConfig {
            max_steps: self.max_steps,
            trace: false,
            record_accesses: self.strategy.is_exhaustive()
                || self.strategy == StrategyKind::Default,
        };
        let budget_runs = self.budget_runs();
        let pct_steps = match self.strategy {
            StrategyKind::Pct { .. } | StrategyKind::Portfolio | StrategyKind::Default => {
                Some(self.calibrate(&config))
            }
            _ => None,
        };
        let steps_estimate = pct_steps.unwrap_or(config.max_steps);
        let mut strategy = self.build_strategy(steps_estimate);
        let mut tally = Tally::new(Instant::now());
        let mut summary = Summary::empty(self.strategy, self.seed, pct_steps);
        let mut run = self.part.first_run;
        loop {
            if strategy.progress().exhausted {
                self.mark_exhausted(&mut summary, &*strategy);
                break;
            }
            if self.spent(budget_runs, &summary, tally.start, &*strategy) {
                break;
            }
            let (result, s) = run_once(self.model, strategy, run, &config);
            strategy = s;
            if self.adapt_to(self.unseen_dependencies(&result), result.yielded_fairly) {
                return self.search();
            }
            if result.outcome == RunOutcome::Pruned || !strategy.progress().counts_last_run {
                run += self.part.stride;
                crate::run::recycle(result);
                continue;
            }
            let new_violation =
                tally.count(&mut summary, run, &result, &*strategy, self.strategy)?;
            if self.checks_run(run, new_violation) {
                self.check_run(run, &result, steps_estimate, &config)?;
                summary.determinism_checked += 1;
            }
            crate::run::recycle(result);
            if let Some(progress) = &mut self.progress {
                if new_violation || summary.runs.is_multiple_of(512) {
                    progress(&Progress {
                        runs: summary.runs,
                        budget_runs,
                        violations: tally.violations.len(),
                        elapsed: tally.start.elapsed(),
                    });
                }
            }
            run += self.part.stride;
            if self.stop_on_first && !tally.violations.is_empty() {
                break;
            }
        }
        Ok(tally.finish(summary, &*strategy))
    }

    /// What an exhausted strategy proved: every schedule, or (when its preemption bound cut
    /// some) every one within the bound.
    fn mark_exhausted(&self, summary: &mut Summary, strategy: &dyn Scheduler) {
        let bound = match self.strategy {
            StrategyKind::Dfs {
                preemption_bound, ..
            } => preemption_bound,
            _ => None,
        };
        summary.exhaustive = bound.is_none() || !strategy.progress().cut_by_bound;
        summary.proved_bound = bound.filter(|_| !summary.exhaustive);
    }

    /// Whether the budget is spent (runs, time, a deepening level's attempts) or the search
    /// was cancelled.
    fn spent(
        &self,
        budget_runs: Option<u64>,
        summary: &Summary,
        start: Instant,
        strategy: &dyn Scheduler,
    ) -> bool {
        budget_runs.is_some_and(|b| summary.runs >= b)
            || self.time.is_some_and(|t| start.elapsed() >= t)
            || self.cancelled()
            || self
                .part
                .max_attempts
                .is_some_and(|m| summary.runs + strategy.progress().pruned >= m)
    }

    /// The strategy; a DFS split over jobs or shards explores only its own subtrees.
    fn build_strategy(&self, steps_estimate: usize) -> Box<dyn Scheduler> {
        if self.strategy == StrategyKind::Default {
            let reduction = match self.plain_plan || !self.model.reduction_safe() {
                true => Reduction::None,
                false => Reduction::VisitedStates,
            };
            let by_value = self.model.state_visible();
            let plan = Plan::new(self.seed, steps_estimate, reduction, by_value)
                .sampling_pruned(self.audit);
            return match self.no_sleep_sets {
                true => Box::new(plan.without_sleep_sets()),
                false => Box::new(plan),
            };
        }
        let StrategyKind::Dfs {
            preemption_bound,
            reduction,
        } = self.strategy
        else {
            return self.strategy.build(self.seed, steps_estimate);
        };
        let mut dfs = Dfs::new(preemption_bound, reduction).sampling_pruned(self.audit, self.seed);
        if self.model.state_visible() {
            dfs = dfs.by_value();
        }
        if self.no_sleep_sets {
            dfs = dfs.without_sleep_sets();
        }
        if self.part.stride == 1 && self.part.dfs_job.is_none() {
            return Box::new(dfs);
        }
        // Shard i of n takes subtrees i, i+n, ...; job j of m within it takes every m-th of
        // those from its j-th: a fixed partition, so each job's search, and so what the merged
        // jobs report, does not depend on which thread ran faster. (The jobs do not share
        // visited states for the same reason: each prunes only by its own.)
        let (shard, shards) = (self.part.first_run % self.part.stride, self.part.stride);
        let (job, jobs) = self.part.dfs_job.unwrap_or((0, 1));
        let claim = move |k: u64| k % shards == shard && (k / shards) % jobs == job;
        Box::new(dfs.with_split(Split {
            depth: SPLIT_DEPTH,
            claim: Box::new(claim),
        }))
    }
}

impl Tally {
    fn new(start: Instant) -> Tally {
        Tally {
            start,
            digests: Distinct::new(),
            batch: Batch::default(),
            found: BTreeMap::new(),
            violations: Vec::new(),
        }
    }

    /// Counts a run that ran to its end (`by` names the strategy whose run it is, under the
    /// default plan its phase's); returns whether it broke an invariant for the first time.
    fn count(
        &mut self,
        summary: &mut Summary,
        run: u64,
        result: &RunResult,
        strategy: &dyn Scheduler,
        kind: StrategyKind,
    ) -> Result<bool, ExploreError> {
        summary.runs += 1;
        summary.yielded_fairly |= result.yielded_fairly;
        summary.end_states.insert(result.end_state);
        summary.max_steps_seen = summary.max_steps_seen.max(result.steps);
        summary.max_tasks_seen = summary.max_tasks_seen.max(result.tasks);
        self.batch.push(result.digest, &mut self.digests);
        let v = match &result.outcome {
            RunOutcome::Holds | RunOutcome::Pruned => return Ok(false),
            RunOutcome::Diverged(d) => return Err(ExploreError::Diverged(d.clone())),
            RunOutcome::Violation(v) => v,
        };
        if let Some(&i) = self.found.get(&v.invariant) {
            self.violations[i].count += 1;
            return Ok(false);
        }
        self.found
            .insert(v.invariant.clone(), self.violations.len());
        self.violations.push(Found {
            invariant: v.invariant.clone(),
            message: v.message.clone(),
            first_run: run,
            runs_to_first: summary.runs,
            count: 1,
            time_to_first: self.start.elapsed(),
            by: strategy.progress().plan.map_or(kind, |p| p.last_by),
            run: result.clone(),
        });
        Ok(true)
    }

    /// The summary once the loop stops: the plan's phases, what the strategy pruned, the
    /// schedules and violations seen.
    fn finish(mut self, mut summary: Summary, strategy: &dyn Scheduler) -> Summary {
        if let Some(p) = strategy.progress().plan {
            let proved_bound = p.finished_bound.filter(|_| !p.complete);
            summary.exhaustive = p.complete;
            summary.proved_bound = proved_bound;
            summary.plan = Some(PlanReport {
                dfs_runs: p.dfs_runs,
                exhaustive: p.complete,
                proved_bound,
                sample_runs: p.sample_runs,
            });
        }
        summary.elapsed = self.start.elapsed();
        let progress = strategy.progress();
        summary.pruned = progress.pruned;
        summary.pruned_sample = progress.pruned_sample.to_vec();
        summary.pruned_branches = progress.pruned_branches;
        self.batch.flush(&mut self.digests);
        summary.distinct_schedules = self.digests.count() as usize;
        summary.schedules = self.digests;
        summary.violations = self.violations;
        summary
    }
}
