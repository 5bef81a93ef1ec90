//! Iterative context bounding (Musuvathi & Qadeer, PLDI 2007) around the search loop: a DFS
//! with no preemption bound and a budget searches every schedule within 0 preemptions, then 1,
//! 2, ..., each level a bounded search of its own, then the unbounded search with what is left;
//! their summaries add up into one (`then_level`).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use super::{ExploreError, Explorer, Found, Progress, ProgressFn, Summary};
use crate::strategy::{Reduction, StrategyKind};

/// How much each deepening level costs over the one before, at most (measured, see
/// `run_deepening`).
const GROWTH: u32 = 4;

/// The half of the budget the bounded levels share (the unbounded search gets the rest).
struct Share {
    attempts: Option<u64>,
    time: Option<Duration>,
}

impl<'m> Explorer<'m> {
    /// Whether this search deepens: an unbounded DFS, with `deepening` on (by default when it
    /// has a budget).
    pub(super) fn deepens(&self) -> bool {
        let unbounded = matches!(
            self.strategy,
            StrategyKind::Dfs {
                preemption_bound: None,
                ..
            }
        );
        unbounded
            && self
                .deepening
                .unwrap_or(self.runs.is_some() || self.time.is_some())
    }

    /// Iterative context bounding (see `deepening`): one bounded search per level, then the
    /// unbounded search with what is left, merged into one summary.
    ///
    /// The levels share half the budget: a level costs about 3-5x the one before (measured on
    /// the broker: bound 2 0.8 s, 3 3.6 s, 4 10 s, while the unbounded search by value takes
    /// 0.8 s), so deepening stops before a level whose predicted cost would pass that half, and
    /// the unbounded search, which either finishes or leaves the levels' statement standing,
    /// gets the rest.
    pub(super) fn run_deepening(mut self) -> Result<Summary, ExploreError> {
        let start = Instant::now();
        let progress = RefCell::new(self.progress.take());
        let share = Share {
            attempts: self.runs.map(|r| r / 2),
            time: self.time.map(|t| t / 2),
        };
        let mut total: Option<Summary> = None;
        let mut attempts = 0u64;
        let mut bound = Some(0);
        loop {
            let done = total.as_ref().map_or(0, |t| t.runs);
            let runs_left = self.runs.map(|r| r.saturating_sub(done));
            let shared = bound.is_some();
            let time_left = match shared {
                true => share.time,
                false => self.time,
            }
            .map(|t| t.saturating_sub(start.elapsed()));
            if total.is_some() && self.cancelled() {
                break;
            }
            if runs_left == Some(0) || time_left.is_some_and(|t| t.is_zero()) {
                if shared {
                    bound = None;
                    continue;
                }
                break;
            }
            let mut level = self.level(bound, done, &progress);
            if let Some(r) = runs_left {
                level = level.runs(r);
            }
            if let (true, Some(s)) = (shared, share.attempts) {
                level.part.max_attempts = Some(s.saturating_sub(attempts).max(1));
            }
            if let Some(t) = time_left {
                level = level.time(t);
            }
            let level_start = Instant::now();
            let part = level.run()?;
            let cost = (part.runs + part.pruned, level_start.elapsed());
            attempts += cost.0;
            let (finished, complete) = (part.finished(), part.exhaustive);
            let found = !part.violations.is_empty();
            total = Some(match total {
                None => part,
                Some(t) => t.then_level(part),
            });
            if complete || !shared || (self.stop_on_first && found) {
                break;
            }
            // Go deeper while the next level is predicted to fit the levels' share.
            let affordable = finished
                && share
                    .attempts
                    .is_none_or(|s| attempts + cost.0 * u64::from(GROWTH) <= s)
                && share
                    .time
                    .is_none_or(|s| start.elapsed() + cost.1 * GROWTH <= s);
            bound = bound.map(|k| k + 1).filter(|_| affordable);
        }
        let mut summary = total.expect("a budget left runs a first level");
        summary.strategy = self.strategy;
        summary.elapsed = start.elapsed();
        Ok(summary)
    }

    /// The search of one level: a DFS within `bound` preemptions (`None`: the unbounded search
    /// at the end), reporting progress as runs after the `done` of the levels before.
    fn level<'a>(
        &'a self,
        bound: Option<usize>,
        done: u64,
        progress: &'a RefCell<Option<ProgressFn<'m>>>,
    ) -> Explorer<'a> {
        let StrategyKind::Dfs { reduction, .. } = self.strategy else {
            unreachable!("only an unbounded DFS deepens")
        };
        let level_reduction = match (reduction, bound) {
            (Reduction::None, _) => Reduction::None,
            (r, None) => r,
            (_, Some(k)) => Reduction::for_search(Some(k), self.model.state_visible()),
        };
        let budget_runs = self.runs;
        let mut level = Explorer::new(self.model)
            .strategy(StrategyKind::Dfs {
                preemption_bound: bound,
                reduction: level_reduction,
            })
            .seed(self.seed)
            .first_run(self.part.first_run)
            .stride(self.part.stride)
            .max_steps(self.max_steps)
            .check_determinism(self.check_determinism)
            .stop_on_first(self.stop_on_first)
            .jobs(self.jobs)
            .deepening(false)
            .sampling(self.audit)
            .on_progress(move |p: &Progress| {
                if let Some(f) = progress.borrow_mut().as_mut() {
                    f(&Progress {
                        runs: done + p.runs,
                        budget_runs,
                        ..*p
                    });
                }
            });
        level.cancel = self.cancel.clone();
        level
    }
}

impl Summary {
    /// This summary followed by the next, deeper level of an iterative deepening: runs and
    /// what they found add up (a violation keeps its first level's run); what is proved is
    /// the deeper level's if it finished, else this one's.
    fn then_level(mut self, next: Summary) -> Summary {
        let offset = self.runs;
        if next.finished() {
            self.exhaustive = next.exhaustive;
            self.proved_bound = next.proved_bound;
        }
        for f in self.absorb(next) {
            match self
                .violations
                .iter_mut()
                .find(|t| t.invariant == f.invariant)
            {
                Some(t) => t.count += f.count,
                None => self.violations.push(Found {
                    first_run: offset + f.first_run,
                    runs_to_first: offset + f.runs_to_first,
                    ..f
                }),
            }
        }
        self.distinct_schedules = self.schedules.count() as usize;
        self
    }
}
