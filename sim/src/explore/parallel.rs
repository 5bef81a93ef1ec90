//! Parallel jobs (`Explorer::jobs`): one exploration split over threads, each job running its
//! own runtimes on its own share of the run space (random/PCT: interleaved run indices; DFS:
//! a fixed share of the subtrees), their summaries merged. The shares are fixed in advance, so
//! the merged result does not depend on which thread ran faster.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{ExploreError, Explorer, Progress, Summary};
use crate::model::Model;
use crate::strategy::StrategyKind;

/// What every job of one parallel exploration is built from: the exploration's settings,
/// copied out of its builder (whose progress callback cannot cross threads).
struct Jobs<'m> {
    model: &'m dyn Model,
    strategy: StrategyKind,
    seed: u64,
    first_run: u64,
    stride: u64,
    max_steps: usize,
    check_determinism: bool,
    stop_on_first: bool,
    time: Option<Duration>,
    audit: usize,
    max_attempts: Option<u64>,
    budget_runs: Option<u64>,
    exhaustive: bool,
    jobs: u64,
}

impl Explorer<'_> {
    /// Runs the jobs on scoped threads, reporting their summed runs as progress every 50 ms,
    /// and merges their summaries.
    pub(super) fn run_parallel(mut self) -> Result<Summary, ExploreError> {
        let jobs = Jobs {
            model: self.model,
            strategy: self.strategy,
            seed: self.seed,
            first_run: self.part.first_run,
            stride: self.part.stride,
            max_steps: self.max_steps,
            check_determinism: self.check_determinism,
            stop_on_first: self.stop_on_first,
            time: self.time,
            audit: self.audit,
            max_attempts: self.part.max_attempts,
            budget_runs: self.budget_runs(),
            exhaustive: self.strategy.is_exhaustive(),
            jobs: self.jobs as u64,
        };
        let mut progress = self.progress.take();
        let counters: Vec<AtomicU64> = (0..jobs.jobs).map(|_| AtomicU64::new(0)).collect();
        let finished = AtomicU64::new(0);
        let start = Instant::now();
        let results: Vec<Result<Summary, ExploreError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..jobs.jobs)
                .map(|j| {
                    let (counter, finished, jobs) = (&counters[j as usize], &finished, &jobs);
                    let cancel = self.cancel.clone();
                    scope.spawn(move || {
                        let summary = jobs.job(j, counter, cancel).run();
                        finished.fetch_add(1, Ordering::Relaxed);
                        summary
                    })
                })
                .collect();
            while finished.load(Ordering::Relaxed) < jobs.jobs {
                std::thread::sleep(Duration::from_millis(50));
                if let Some(progress) = &mut progress {
                    progress(&Progress {
                        runs: counters.iter().map(|c| c.load(Ordering::Relaxed)).sum(),
                        budget_runs: jobs.budget_runs,
                        violations: 0,
                        elapsed: start.elapsed(),
                    });
                }
            }
            handles
                .into_iter()
                .map(|h| h.join().expect("an exploration job panicked"))
                .collect()
        });
        let parts = results.into_iter().collect::<Result<Vec<_>, _>>()?;
        let mut summary = Summary::merge(parts).expect("at least one job");
        summary.elapsed = start.elapsed();
        Ok(summary)
    }
}

impl<'m> Jobs<'m> {
    /// Job `j`'s exploration, storing its runs in `counter` as it goes.
    fn job<'a>(
        &self,
        j: u64,
        counter: &'a AtomicU64,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Explorer<'a>
    where
        'm: 'a,
    {
        let jobs = self.jobs;
        // Random/PCT jobs take interleaved run indices; DFS jobs walk the same tree, each
        // exploring its fixed share of its subtrees.
        let (first, step) = match self.exhaustive {
            true => (self.first_run, self.stride),
            false => (self.first_run + j * self.stride, self.stride * jobs),
        };
        let mut job = Explorer::new(self.model)
            .strategy(self.strategy)
            .seed(self.seed)
            .first_run(first)
            .stride(step)
            .max_steps(self.max_steps)
            .check_determinism(self.check_determinism)
            .stop_on_first(self.stop_on_first)
            .on_progress(|p: &Progress| counter.store(p.runs, Ordering::Relaxed));
        if let Some(r) = self.budget_runs {
            job = job.runs(if r > j { (r - j).div_ceil(jobs) } else { 0 });
        }
        if let Some(t) = self.time {
            job = job.time(t);
        }
        job.audit = self.audit;
        job.part.sampling_only = true;
        // This exploration deepens (or not) around its jobs, not inside them.
        job.deepening = Some(false);
        job.part.max_attempts = self.max_attempts.map(|m| m.div_ceil(jobs));
        job.part.dfs_job = self.exhaustive.then_some((j, jobs));
        job.cancel = cancel;
        job
    }
}
