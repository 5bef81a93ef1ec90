//! One search of a generated program written as a user test, for the differential tests that
//! set reduced DFS beside plain search (`user_test_reduction.rs`, `net_fs_reduction.rs`,
//! `mpsc_reduction.rs`): the outcomes its runs reached, whether it failed, and whether it
//! finished what it was asked; and the two comparisons they make of such searches.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};

use braid::{Outcome, Strategy};

/// What one search reached: each completed run's outcome (the check's probe run after a
/// holding search left out), the violation if one was found, and its runs.
pub struct Reached<T> {
    pub outcomes: BTreeSet<T>,
    pub failed: Option<String>,
    /// It did what was asked (a DFS holds only once every schedule within its bound, if any,
    /// was explored; a failure ends a search too).
    pub finished: bool,
    pub runs: u64,
}

#[allow(dead_code)]
impl<T: Ord + std::fmt::Debug> Reached<T> {
    /// How a reduced search (`self`) differs from the plain search of the same program and
    /// bound, which finished: it failed, did not finish, or reached other outcomes. `None` when
    /// they agree.
    pub fn differs_from_plain(&self, plain: &Reached<T>) -> Option<String> {
        if self.failed.is_none() && self.finished && self.outcomes == plain.outcomes {
            return None;
        }
        let missed: Vec<_> = plain.outcomes.difference(&self.outcomes).collect();
        let extra: Vec<_> = self.outcomes.difference(&plain.outcomes).collect();
        Some(format!(
            "finished {}, failed {:?}, missed {missed:?}, extra {extra:?}",
            self.finished, self.failed
        ))
    }

    /// How a finished reduced search (`self`) falls short of random runs of the same program
    /// (`sampled`): an outcome they reached that it did not, or a failure on either side.
    /// `None` when it does not.
    pub fn misses_sampled(&self, sampled: &Reached<T>) -> Option<String> {
        let missed: Vec<_> = sampled.outcomes.difference(&self.outcomes).collect();
        if missed.is_empty() && self.failed.is_none() && sampled.failed.is_none() {
            return None;
        }
        Some(format!(
            "missed {missed:?}, failed {:?} (random runs: {:?})",
            self.failed, sampled.failed
        ))
    }
}

/// Searches `body` (whose output is a run's outcome) as the check `name`, with `strategy` and
/// at most `runs` runs.
#[allow(dead_code)]
pub fn reach<T, F, Fut>(name: &str, strategy: Strategy, runs: u64, body: F) -> Reached<T>
where
    T: Ord + Send + 'static,
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = T> + 'static,
{
    reach_steps(name, strategy, runs, None, body)
}

/// `reach`, with runs cut at `max_steps` (`None`: the default bound).
pub fn reach_steps<T, F, Fut>(
    name: &str,
    strategy: Strategy,
    runs: u64,
    max_steps: Option<usize>,
    body: F,
) -> Reached<T>
where
    T: Ord + Send + 'static,
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = T> + 'static,
{
    let finals: Arc<Mutex<Vec<T>>> = Arc::default();
    let f = finals.clone();
    let mut check = braid::check(move || {
        let (run, f) = (body(), f.clone());
        async move {
            let outcome = run.await;
            f.lock().unwrap().push(outcome);
        }
    })
    .name(name)
    .strategy(strategy)
    .runs(runs)
    .out(std::env::temp_dir().join("braid-differential"))
    // The audit's plain runs would add their outcomes to the reduced search's: measure the
    // reduction alone.
    .without_reduction_audit();
    if let Some(n) = max_steps {
        check = check.max_steps(n);
    }
    let report = check.run();
    let mut finals = std::mem::take(&mut *finals.lock().unwrap());
    let (failed, finished, runs) = match &report.outcome {
        Outcome::Holds { runs, .. } => {
            finals.pop(); // the probe: one more run, on a random schedule, after the search
            (None, true, *runs)
        }
        Outcome::Failed(f) => (Some(format!("{}: {}", f.invariant, f.message)), true, 0),
        Outcome::Inconclusive(_) => (None, false, 0),
        other => panic!("{name}: {other:?}"),
    };
    Reached {
        outcomes: finals.into_iter().collect(),
        failed,
        finished,
        runs,
    }
}
