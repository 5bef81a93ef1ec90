//! The reduction audit on a test: the one place braid can tell that a test shares state it does
//! not see. A test's reduced search (visited states, sleep sets) rests on every shared access
//! going through braid's primitives; a `std::sync` atomic or lock, a `RefCell` or a static
//! shared between tasks breaks that unseen, and the reduction may then prune the one schedule
//! that fails. So after a reduced search that found nothing, a seeded sample of the branches it
//! pruned is explored again by plain DFS (`sim::audit`), and what it reaches that the search
//! did not is evidence: a violation is reported as the test's failure (a real schedule, with
//! its replay file), anything else sends the test back to a search without reduction.

use std::time::Duration;

use sim::explore::{Found, Summary};

/// Pruned branches the audit re-explores (a seeded sample), the plain-DFS runs below each, and
/// in all at most as many runs as the search made or `AT_LEAST` (most pruned subtrees are far
/// smaller), against the scenarios' 32 branches of 250 (`braid explore --audit-reduction`).
pub(crate) const BRANCHES: usize = 16;
pub(crate) const RUNS_PER_BRANCH: u64 = 64;
pub(crate) const AT_LEAST: u64 = 256;

/// What the hint says a test sharing unseen state should do.
const HINT: &str = "this test shares state braid does not see (std's locks or atomics, a \
                    RefCell, a static), and the reduction pruned the schedule that reaches it; \
                    switch that state to braid::std::sync or braid::tokio::sync, or declare it \
                    with #[braid::test(plain_state)] / Check::plain_state()";

/// What the audit of a test's search found.
pub(crate) enum Finding {
    /// Nothing the search did not reach (or no audit: a plain search, a failure found).
    Clean,
    /// A violation below a pruned branch: the test's failure.
    Violation(Box<Found>),
    /// Something else the search never reached (an end state of its `Log`s), in words.
    Missed(String),
}

/// What the audit of `summary`'s search found.
pub(crate) fn finding(summary: &Summary) -> Finding {
    let Some(report) = &summary.audit else {
        return Finding::Clean;
    };
    if let Some((miss, v)) = report
        .misses
        .iter()
        .find_map(|m| m.run.violation().map(|v| (m, v)))
    {
        return Finding::Violation(Box::new(Found {
            invariant: v.invariant.clone(),
            message: format!("{} (found by the reduction audit: {HINT})", v.message),
            first_run: 0,
            runs_to_first: summary.runs,
            count: 1,
            time_to_first: Duration::ZERO,
            by: summary.strategy,
            run: miss.run.clone(),
        }));
    }
    match report.misses.first() {
        Some(miss) => Finding::Missed(miss.what.clone()),
        None => Finding::Clean,
    }
}

/// The warning for a test whose audit reached `what`, searched again without reduction.
pub(crate) fn warning(test: &str, what: &str) -> String {
    format!(
        "braid: {test}: the reduction audit reached {what} below a schedule the reduced search \
         pruned: {HINT}. Searching again without reduction."
    )
}

/// What a pass after the search without reduction adds to its coverage.
pub(crate) const COVERAGE_NOTE: &str =
    "; searched without reduction: the reduction audit found that this test shares state braid \
     does not see (declare it with plain_state)";
