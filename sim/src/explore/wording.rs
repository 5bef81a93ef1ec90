//! What an exploration establishes, in English: "every schedule", "every fair schedule within
//! 2 preemptions", "9000 sampled runs". One place for the wording, so that the CLI's reports,
//! the CI's proofs and `#[braid::test]`'s verdicts say the same thing the same way.

use super::summary::{PlanReport, Summary};

impl Summary {
    /// What a search that found no violation establishes, in words: "every schedule",
    /// "every schedule within 2 preemptions", or how far a sample went.
    pub fn coverage(&self) -> String {
        if let Some(plan) = &self.plan {
            return plan.describe(self.yielded_fairly);
        }
        let every = every_schedule(self.yielded_fairly);
        match (self.exhaustive, self.proved_bound) {
            _ if self.proves_nothing() => "nothing: no run reached its end".to_string(),
            (true, _) => every.to_string(),
            (false, Some(k)) => format!("{every} within {}", preemptions(k)),
            (false, None) => format!("{} sampled runs", self.runs),
        }
    }

    /// Why a search that was to prove something did not: nothing reached its end, or the
    /// budget ran out (with what it does cover when a preemption bound was finished; a count of
    /// sampled runs would only repeat the number of runs).
    pub fn unfinished(&self) -> String {
        if self.proves_nothing() {
            return "no run reached its end, so nothing was judged: nothing is proved".to_string();
        }
        let covered = match self.proved_bound.is_some() || self.plan.is_some() {
            true => format!(", covering {}", self.coverage()),
            false => String::new(),
        };
        format!(
            "the search did not finish within its budget: {} runs explored{covered}",
            self.runs
        )
    }
}

impl PlanReport {
    /// "every schedule (DFS, 212 runs)", or "every schedule within 2 preemptions, then 9000
    /// sampled runs".
    pub fn describe(&self, yielded_fairly: bool) -> String {
        let every = every_schedule(yielded_fairly);
        let proof = match (self.exhaustive, self.proved_bound) {
            (true, _) => every.to_string(),
            (false, Some(k)) => format!("{every} within {}", preemptions(k)),
            (false, None) => format!("{} DFS runs, no preemption bound finished", self.dfs_runs),
        };
        let s = |n: u64| if n == 1 { "" } else { "s" };
        match self.sample_runs {
            0 if self.exhaustive => {
                format!("{proof} ({} DFS run{})", self.dfs_runs, s(self.dfs_runs))
            }
            0 => proof,
            n => format!("{proof}, then {n} sampled run{}", s(n)),
        }
    }
}

/// "every schedule", or "every fair schedule" when tasks yielded (`sim::yield_now`): DFS then
/// explores only the schedules where a yielding task lets the others move first.
pub fn every_schedule(yielded_fairly: bool) -> &'static str {
    match yielded_fairly {
        true => "every fair schedule",
        false => "every schedule",
    }
}

/// "1 preemption", "2 preemptions".
pub fn preemptions(k: usize) -> String {
    match k {
        1 => "1 preemption".to_string(),
        k => format!("{k} preemptions"),
    }
}
