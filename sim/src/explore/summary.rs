//! What an exploration reports ([`Summary`], with each invariant's first failure as a [`Found`]
//! and the default plan's phases as a [`PlanReport`]), and its one merge: the summaries of the
//! jobs or shards that split one run space combine into what one exploration of it reports.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::distinct::Distinct;
use crate::run::RunResult;
use crate::strategy::StrategyKind;

/// Progress, reported every few hundred runs and at each new violation.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Runs counted so far (as `Summary::runs` counts them).
    pub runs: u64,
    /// The run budget, if any: with `runs`, how far along the search is.
    pub budget_runs: Option<u64>,
    /// Invariants broken so far (0 from a parallel search, whose jobs report only runs).
    pub violations: usize,
    /// Wall time since the exploration started.
    pub elapsed: Duration,
}

/// The first run that broke one invariant, and how often it broke.
#[derive(Clone, Debug)]
pub struct Found {
    /// The broken invariant's name.
    pub invariant: String,
    /// What the invariant said about the first failing run.
    pub message: String,
    /// Index of the first failing run (reproducible alone from seed + strategy + index; a DFS
    /// counts its pruned runs in the index too).
    pub first_run: u64,
    /// Counted runs up to and including the first failing one: what the report's "runs"
    /// counts (DFS runs cut short by a reduction are not counted).
    pub runs_to_first: u64,
    /// Runs that broke this invariant.
    pub count: u64,
    /// Wall time from the start of the exploration to the first failing run.
    pub time_to_first: Duration,
    /// The strategy whose run this is (under the default plan: its DFS or the sampler of that turn).
    pub by: StrategyKind,
    /// The first failing run itself (its decisions replay it; shrinking starts from it).
    pub run: RunResult,
}

/// What an exploration found and how far it went: the result of `Explorer::run`.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The strategy explored with (as adapted to the model: a reduction it cannot use dropped).
    pub strategy: StrategyKind,
    /// The seed of the random choices (of random, PCT, the portfolio, the plan's samplers, audit samples).
    pub seed: u64,
    /// The run length PCT placed its change points within (calibrated).
    pub pct_steps: Option<usize>,
    /// Runs explored to their end (DFS runs cut short by a reduction are `pruned` instead).
    pub runs: u64,
    /// Distinct schedules among the runs (an estimate past `Distinct::CAP`, see `schedules`).
    pub distinct_schedules: usize,
    /// Wall time of the whole exploration.
    pub elapsed: Duration,
    /// The longest run, in steps (PCT's bound uses it).
    pub max_steps_seen: usize,
    /// The most tasks one run had (PCT's bound uses it).
    pub max_tasks_seen: usize,
    /// Runs re-executed to check determinism.
    pub determinism_checked: u64,
    /// Violations by invariant, in order of first appearance.
    pub violations: Vec<Found>,
    /// DFS explored every schedule (no preemption bound kept it from any): `holds` is then a
    /// proof for this model's sizes, on the model's declarations (`Model::reduction_safe`,
    /// `Model::state_visible`).
    pub exhaustive: bool,
    /// DFS explored every schedule with at most this many preemptions (a bounded search that
    /// finished, or the last level an iterative deepening finished); `None` when `exhaustive`
    /// or when no bound was finished.
    pub proved_bound: Option<usize>,
    /// DFS runs cut short as equivalent to an explored schedule (not counted in `runs`).
    pub pruned: u64,
    /// Distinct end states (each task's event sequence): equal for equivalent schedules.
    pub end_states: BTreeSet<u64>,
    /// A seeded sample of the branches the reduction pruned (with `Explorer::audit`), and how
    /// many it pruned in all.
    pub pruned_sample: Vec<crate::strategy::Branch>,
    /// How many branches the reduction pruned in all (`pruned_sample` is a sample of them).
    pub pruned_branches: u64,
    /// The reduction audit's findings (with `Explorer::audit`).
    pub audit: Option<crate::audit::AuditReport>,
    /// Under the default plan, how its two phases went.
    pub plan: Option<PlanReport>,
    /// Some run yielded fairly: "every schedule" then means every fair schedule.
    pub yielded_fairly: bool,
    /// The runs' trace digests (their count is `distinct_schedules`), kept so that the
    /// summaries of parallel jobs and shards merge: exactly up to `Distinct::CAP` of them, as
    /// a sketch past it (the count is then an estimate, `distinct_estimated`), so that memory
    /// stays flat however many runs an exploration makes.
    pub schedules: Distinct,
}

/// How the default plan's two sides went: the bounded exhaustive search and its samplers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanReport {
    /// Runs of the DFS phase, and what it proved (every schedule, or every one within a bound).
    pub dfs_runs: u64,
    /// The DFS phase explored every schedule.
    pub exhaustive: bool,
    /// The DFS phase explored every schedule within this many preemptions (not `exhaustive`).
    pub proved_bound: Option<usize>,
    /// Runs of the plan's samplers (0 when the DFS finished, or found a violation first).
    pub sample_runs: u64,
}

impl Summary {
    /// The summary of a search that has not run yet: every count zero, nothing proved.
    pub(super) fn empty(strategy: StrategyKind, seed: u64, pct_steps: Option<usize>) -> Summary {
        Summary {
            strategy,
            seed,
            pct_steps,
            runs: 0,
            distinct_schedules: 0,
            elapsed: Duration::ZERO,
            max_steps_seen: 0,
            max_tasks_seen: 0,
            determinism_checked: 0,
            violations: Vec::new(),
            exhaustive: false,
            proved_bound: None,
            pruned: 0,
            end_states: BTreeSet::new(),
            schedules: Distinct::new(),
            pruned_sample: Vec::new(),
            pruned_branches: 0,
            audit: None,
            plan: None,
            yielded_fairly: false,
        }
    }

    /// Combines the summaries of jobs or shards that split one run space: the result is what
    /// one exploration of the whole space reports (elapsed time aside).
    pub fn merge(parts: Vec<Summary>) -> Option<Summary> {
        let mut parts = parts.into_iter();
        let mut total = parts.next()?;
        for p in parts {
            total.proved_bound = merged_proved_bound(
                (total.exhaustive, total.proved_bound),
                (p.exhaustive, p.proved_bound),
            );
            total.exhaustive &= p.exhaustive;
            total.elapsed = total.elapsed.max(p.elapsed);
            for f in total.absorb(p) {
                match total
                    .violations
                    .iter_mut()
                    .find(|t| t.invariant == f.invariant)
                {
                    Some(t) => {
                        t.count += f.count;
                        if f.first_run < t.first_run {
                            let count = t.count;
                            *t = Found { count, ..f };
                        }
                    }
                    None => total.violations.push(f),
                }
            }
        }
        total.violations.sort_by_key(|f| f.first_run);
        total.distinct_schedules = total.schedules.count() as usize;
        Some(total)
    }

    /// Adds what `other` counted and saw to this summary (runs, schedules, end states, the
    /// largest run, pruning), and hands back its violations: the one part of merging where a
    /// split of the run space (`merge`) and a sequence of deepening levels differ.
    pub(super) fn absorb(&mut self, other: Summary) -> Vec<Found> {
        self.runs += other.runs;
        self.yielded_fairly |= other.yielded_fairly;
        self.schedules.merge(other.schedules);
        self.end_states.extend(other.end_states);
        self.max_steps_seen = self.max_steps_seen.max(other.max_steps_seen);
        self.max_tasks_seen = self.max_tasks_seen.max(other.max_tasks_seen);
        self.determinism_checked += other.determinism_checked;
        self.pruned += other.pruned;
        self.pruned_sample.extend(other.pruned_sample);
        self.pruned_branches += other.pruned_branches;
        other.violations
    }

    /// Whether `distinct_schedules` is an estimate (more than `Distinct::CAP` of them).
    pub fn distinct_estimated(&self) -> bool {
        self.schedules.is_estimate()
    }

    /// PCT's guaranteed per-run probability of hitting a given depth-d bug, 1/(n k^(d-1)), from
    /// the tasks (n) and steps (k) observed.
    pub fn pct_bound(&self) -> Option<f64> {
        match self.strategy {
            StrategyKind::Pct { depth } => Some(crate::strategy::Pct::bound(
                self.max_tasks_seen,
                self.pct_steps
                    .unwrap_or(self.max_steps_seen)
                    .max(self.max_steps_seen),
                depth,
            )),
            _ => None,
        }
    }

    /// The probability that the runs done would have found a given depth-d bug: 1 - (1-p)^runs.
    pub fn pct_confidence(&self) -> Option<f64> {
        self.pct_bound()
            .map(|p| 1.0 - (1.0 - p).powf(self.runs as f64))
    }

    /// Whether the search finished what it set out to explore: every schedule, or every one
    /// within a preemption bound.
    pub fn finished(&self) -> bool {
        self.exhaustive || self.proved_bound.is_some()
    }

    /// Whether the exploration judged nothing: every run was cut before it ended, so no
    /// schedule was seen through (a search that says "holds" then proves nothing).
    pub fn proves_nothing(&self) -> bool {
        self.runs == 0
    }

    /// Runs per second of wall time (0 when no time was measured).
    pub fn runs_per_sec(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.runs as f64 / secs
        } else {
            0.0
        }
    }
}

/// What two parts of one split search prove together, each as (exhaustive, proved bound): every
/// schedule if both cover every schedule, else every schedule within the smaller bound that
/// both reached (none if either reached none).
pub fn merged_proved_bound(a: (bool, Option<usize>), b: (bool, Option<usize>)) -> Option<usize> {
    match (a, b) {
        ((true, _), (true, _)) => None,
        ((true, _), (false, k)) | ((false, k), (true, _)) => k,
        ((false, j), (false, k)) => j.zip(k).map(|(j, k)| j.min(k)),
    }
}
