//! What a search proved, judged once for every entry point: `sim::check::Check`,
//! `braid::check` and `#[braid::test]`, and `braid explore`'s outcome all call
//! [`Summary::verdict`], so the same summary is judged the same everywhere (issue 31: two
//! builders had judged an unbounded DFS that deepened only to "within k preemptions" one
//! inconclusive, the other a pass).
//!
//! The rules: a violation is the verdict; a search that saw no run through proves nothing; a
//! DFS asked for is a proof asked for, so it passes only if it finished what was asked (every
//! schedule, without a bound; every schedule within the bound, with one); a sampling search (or
//! the default plan) passes for what it covered, which its coverage says.

use super::Summary;
use crate::strategy::StrategyKind;

/// What a search's summary says about the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchVerdict {
    /// A run broke an invariant (the summary's `violations` say which).
    Violated,
    /// No violation, and the search did what was asked of it.
    Holds,
    /// Nothing a pass could rest on: why.
    Inconclusive(String),
}

impl Summary {
    /// The verdict on this summary of a search `asked` for (the strategy as requested, before
    /// the explorer adapted it).
    pub fn verdict(&self, asked: StrategyKind) -> SearchVerdict {
        if !self.violations.is_empty() {
            return SearchVerdict::Violated;
        }
        let proof_done = match asked {
            StrategyKind::Dfs {
                preemption_bound: None,
                ..
            } => self.exhaustive,
            StrategyKind::Dfs { .. } => self.finished(),
            _ => true,
        };
        if self.proves_nothing() || !proof_done {
            return SearchVerdict::Inconclusive(self.unfinished());
        }
        SearchVerdict::Holds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Reduction;

    /// One summary: an unbounded DFS whose budget ran out after it had finished the levels
    /// within 2 preemptions.
    fn deepened_to_two() -> Summary {
        let mut s = Summary::empty(StrategyKind::dfs(None), 1, None);
        s.runs = 500;
        s.proved_bound = Some(2);
        s
    }

    #[test]
    fn a_proof_asked_for_passes_only_when_it_finished_what_was_asked() {
        let s = deepened_to_two();
        let unbounded = StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        };
        assert!(matches!(
            s.verdict(unbounded),
            SearchVerdict::Inconclusive(_)
        ));
        let within_two = StrategyKind::dfs(Some(2));
        assert_eq!(s.verdict(within_two), SearchVerdict::Holds);
        assert_eq!(s.verdict(StrategyKind::Default), SearchVerdict::Holds);
        let mut nothing = deepened_to_two();
        nothing.runs = 0;
        assert!(matches!(
            nothing.verdict(StrategyKind::Random),
            SearchVerdict::Inconclusive(_)
        ));
    }
}
