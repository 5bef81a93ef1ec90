//! The default plan: a bounded exhaustive search and the portfolio, taking turns run by run.
//!
//! The DFS deepens its preemption bound level by level (iterative context bounding: every
//! schedule within 0 preemptions, then 1, then 2), then searches without a bound; once a
//! search finishes without a bound cutting anything, it has explored every schedule: the plan
//! is then exhausted, a proof. Runs alternate: one of the DFS (counted, or cut short by its
//! reduction), one of the portfolio (random and PCT at several depths), so a bug the portfolio
//! finds in its n-th run is found within 2n runs, and a bug that needs an exact interleaving
//! (which sampling misses) is found by the enumeration.

use super::{
    Dfs, PickView, Portfolio, Reduction, RunNeeds, Scheduler, SearchProgress, Stop, StrategyKind,
};
use crate::vocab::RunOutcome;
use crate::vocab::TaskId;

/// Whose run is in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    Dfs,
    Sample,
}

/// The default plan's strategy (`StrategyKind::Default`): a bounded DFS, deepening level by level,
/// and the portfolio, taking turns run by run.
pub struct Plan {
    dfs: Dfs,
    sample: Portfolio,
    turn: Turn,
    /// The DFS level in progress (`None`: the unbounded search after the bounded levels), the
    /// deepest one finished, and whether a finished search cut nothing (every schedule).
    bound: Option<usize>,
    finished_bound: Option<usize>,
    complete: bool,
    reduction: Reduction,
    by_value: bool,
    no_sleep_sets: bool,
    /// Counted runs of each side, and runs the DFS levels cut short.
    dfs_runs: u64,
    sample_runs: u64,
    pruned_before: u64,
    last_counted: bool,
    last_by: StrategyKind,
}

/// The bounded levels before the unbounded search: every schedule within 0, 1 and 2
/// preemptions (where most bugs are, quickly), then all of them (which, by value, is often
/// cheaper than a deeper level).
const LAST_BOUNDED_LEVEL: usize = 2;

impl Plan {
    /// The plan: its DFS reduced by `reduction` (by value when `by_value`), its portfolio seeded by
    /// `seed` with PCT's change points within `steps`.
    pub fn new(seed: u64, steps: usize, reduction: Reduction, by_value: bool) -> Self {
        let mut plan = Plan {
            dfs: Dfs::new(Some(0), reduction),
            sample: Portfolio::new(seed, steps),
            turn: Turn::Dfs,
            bound: Some(0),
            finished_bound: None,
            complete: false,
            reduction,
            by_value,
            no_sleep_sets: false,
            dfs_runs: 0,
            sample_runs: 0,
            pruned_before: 0,
            last_counted: true,
            last_by: StrategyKind::Default,
        };
        plan.dfs = plan.level(Some(0));
        plan
    }

    /// Visited states without sleep sets (a model that yields fairly, see
    /// `Dfs::without_sleep_sets`).
    pub fn without_sleep_sets(mut self) -> Self {
        self.no_sleep_sets = true;
        self.dfs = self.level(self.bound);
        self
    }

    fn level(&self, bound: Option<usize>) -> Dfs {
        let mut dfs = Dfs::new(bound, self.reduction);
        if self.by_value {
            dfs = dfs.by_value();
        }
        if self.no_sleep_sets {
            dfs = dfs.without_sleep_sets();
        }
        dfs
    }

    fn active(&mut self) -> &mut dyn Scheduler {
        match self.turn {
            Turn::Dfs => &mut self.dfs,
            Turn::Sample => &mut self.sample,
        }
    }
}

impl Scheduler for Plan {
    fn begin_run(&mut self, run: u64) -> RunNeeds {
        if self.complete {
            self.turn = Turn::Sample;
        }
        match self.turn {
            Turn::Dfs => self.dfs.begin_run(run),
            // The portfolio's own run numbers: its n-th run here is the n-th run it would make
            // alone (which of its strategies, which random stream), so the plan finds what it
            // finds within twice its runs. (Its runs never keep state by value.)
            Turn::Sample => RunNeeds {
                value_state: false,
                ..self.sample.begin_run(self.sample_runs)
            },
        }
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        self.active().pick_task(view)
    }

    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Stop> {
        self.active().pick_value(step, n)
    }

    fn end_run(&mut self, run: &crate::RunResult) {
        self.active().end_run(run);
        match self.turn {
            Turn::Dfs => {
                self.last_by = StrategyKind::Dfs {
                    preemption_bound: self.bound,
                    reduction: self.reduction,
                };
                let dfs = self.dfs.progress();
                self.last_counted = run.outcome != RunOutcome::Pruned && dfs.counts_last_run;
                if self.last_counted {
                    self.dfs_runs += 1;
                }
                if dfs.exhausted {
                    self.pruned_before += dfs.pruned;
                    match self.bound {
                        Some(k) if dfs.cut_by_bound => {
                            self.finished_bound = Some(k);
                            self.bound = (k < LAST_BOUNDED_LEVEL).then_some(k + 1);
                            self.dfs = self.level(self.bound);
                        }
                        _ => self.complete = true,
                    }
                }
                // The portfolio's turn after every DFS run, counted or cut short by the
                // reduction: with up to 32 cut-short runs per turn, as before, a level that
                // prunes much took the runs in which the portfolio would find a bug (the bind
                // race at 40 runs for the portfolio's 5, bound-first 2x2 at 109,245 for its
                // 16,736: `cargo bench --bench explore`).
                self.turn = Turn::Sample;
            }
            Turn::Sample => {
                self.last_by = StrategyKind::Portfolio;
                self.last_counted = true;
                self.sample_runs += 1;
                if !self.complete {
                    self.turn = Turn::Dfs;
                }
            }
        }
    }

    /// Every schedule explored once a DFS level finished without its bound cutting anything;
    /// the pruned runs of every level so far; the sample of the level in progress.
    fn progress(&self) -> SearchProgress<'_> {
        let dfs = self.dfs.progress();
        SearchProgress {
            exhausted: self.complete,
            pruned: self.pruned_before + if self.complete { 0 } else { dfs.pruned },
            cut_by_bound: false,
            counts_last_run: self.last_counted,
            plan: Some(PlanProgress {
                dfs_runs: self.dfs_runs,
                sample_runs: self.sample_runs,
                finished_bound: self.finished_bound,
                complete: self.complete,
                last_by: self.last_by,
            }),
            ..dfs
        }
    }
}

/// How far the plan has got (`SearchProgress::plan`).
#[derive(Clone, Copy, Debug)]
pub struct PlanProgress {
    /// Runs of the DFS, counted (not those its reduction cut short).
    pub dfs_runs: u64,
    /// Runs of the portfolio.
    pub sample_runs: u64,
    /// The deepest DFS level finished: every schedule within that many preemptions.
    pub finished_bound: Option<usize>,
    /// A level finished without its bound cutting anything: every schedule.
    pub complete: bool,
    /// Which side the last run was.
    pub last_by: StrategyKind,
}
