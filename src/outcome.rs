//! What a check found (`Report`): its verdict (`Outcome`) and how the committed regression
//! files it replayed first went (`Regression`). Below the code that finds them (`check`,
//! `regressions`) and the code that writes them down (`outcome_file`), which all speak it.

use std::path::PathBuf;

use crate::failure::Failure;

/// What a check found.
///
/// ```
/// let report = braid::check(|| async {}).run();
/// match &report.outcome {
///     braid::Outcome::Holds { coverage, .. } => assert!(coverage.starts_with("every schedule")),
///     other => panic!("{other:?}"),
/// }
/// assert!(report.failure().is_none());
/// ```
#[derive(Debug)]
pub struct Report {
    /// The verdict.
    pub outcome: Outcome,
    /// The committed regression files replayed before exploring, and how each went.
    pub regressions: Vec<Regression>,
}

impl Report {
    /// The failing schedule, if the check failed.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.outcome {
            Outcome::Failed(f) => Some(f),
            _ => None,
        }
    }
}

/// The verdict of a check.
///
/// ```
/// let outcome = braid::check(|| async { braid::task::yield_now().await })
///     .strategy(braid::Strategy::dfs(None))
///     .runs(1)
///     .run()
///     .outcome;
/// // One run cannot finish the proof the DFS strategy asks for.
/// assert!(matches!(outcome, braid::Outcome::Holds { .. } | braid::Outcome::Inconclusive(_)));
/// ```
#[derive(Debug)]
pub enum Outcome {
    /// No schedule explored failed.
    Holds {
        /// Runs explored.
        runs: u64,
        /// Every schedule was explored.
        exhaustive: bool,
        /// What the runs cover, in words ("every schedule", "every schedule within 2
        /// preemptions, then 8000 sampled runs").
        coverage: String,
    },
    /// A schedule failed (a panic, a property, a deadlock, a livelock).
    Failed(Box<Failure>),
    /// Nothing a pass could rest on: no run reached its end, or a requested proof (DFS) ran
    /// out of budget before it finished.
    Inconclusive(String),
    /// The replay file in `BRAID_REPLAY` no longer fits the test.
    Drifted(String),
}

/// A committed regression file, and how its replay went.
///
/// ```
/// let dir = std::env::temp_dir().join("braid-doc-regressions-empty");
/// let report = braid::check(|| async {}).regressions(&dir).run();
/// // No files there: nothing replayed first.
/// assert!(report.regressions.is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Regression {
    /// The file.
    pub file: PathBuf,
    /// How its replay went.
    pub status: Status,
}

/// How a committed regression file replayed.
#[derive(Clone, Debug)]
pub enum Status {
    /// The schedule ran to its end without failing: the bug it recorded is fixed.
    Passes,
    /// The schedule fails again the same way.
    FailsAgain(Box<Failure>),
    /// The schedule no longer fits the test (it changed): the file should be re-recorded or
    /// removed. Reported, not failed: a fix often changes the schedule.
    Drifted(String),
}

impl Regression {
    pub(crate) fn failure(&self) -> Option<&Failure> {
        match &self.status {
            Status::FailsAgain(f) => Some(f),
            _ => None,
        }
    }
}
