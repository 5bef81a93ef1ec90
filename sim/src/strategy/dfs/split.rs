//! Splitting the search for parallel jobs and shards (see the module docs of `dfs`): above a
//! fixed depth every job walks the same top of the tree; each subtree below is explored by the
//! job or shard whose `claim` accepts it.

use super::Dfs;
use crate::strategy::Stop;

/// Where the search splits into subtrees, and who explores which (see the module docs).
pub struct Split {
    /// Branching decision nodes (two or more options) above the subtrees' roots.
    pub depth: usize,
    /// Called with each subtree's index, in the same order in every job: true means explore it
    /// here.
    pub claim: Box<dyn FnMut(u64) -> bool>,
}

impl Dfs {
    /// Explores only the subtrees `split.claim` accepts.
    pub fn with_split(mut self, split: Split) -> Self {
        self.split = Some(split);
        self
    }

    /// Whether a node at stack index `at` lies above the split (every option explored).
    pub(super) fn above_split(&self, at: usize) -> bool {
        self.split.is_some() && self.split_root.is_none_or(|root| at < root)
    }

    /// The next subtree in walk order: whether this job explores it.
    pub(super) fn claim_next(&mut self) -> bool {
        let k = self.subtrees;
        self.subtrees += 1;
        self.split.as_mut().is_none_or(|s| (s.claim)(k))
    }

    /// At a decision point: a run reaching the split depth on a new path enters a new subtree;
    /// an unclaimed one ends here.
    pub(super) fn enter_subtree(&mut self) -> Result<(), Stop> {
        let Some(depth) = self.split.as_ref().map(|s| s.depth) else {
            return Ok(());
        };
        if self.split_root.is_some() {
            return Ok(());
        }
        let branching = self.stack[..self.depth]
            .iter()
            .filter(|n| n.backtrack.len() > 1)
            .count();
        if branching < depth {
            return Ok(());
        }
        self.split_root = Some(self.depth);
        if self.depth == self.stack.len() {
            self.owned = self.claim_next();
            if !self.owned {
                return Err(Stop::Pruned);
            }
        }
        Ok(())
    }
}
