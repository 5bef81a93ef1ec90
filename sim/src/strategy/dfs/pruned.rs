//! The audit's sample of what the reduction pruned (`crate::audit`): paths into the search
//! tree down to a pruned branch, kept by reservoir sampling, and a search below one of them.

use std::collections::{BTreeSet, HashMap};

use super::node::Node;
use super::Dfs;

/// A path into the search tree: the decisions down to a branch, with what a search below it
/// needs to know of each (enabled tasks, the running task, preemptions spent, state).
#[derive(Clone, Debug)]
pub struct Branch {
    nodes: Vec<Node>,
    /// The preemption bound of the search that pruned it.
    pub bound: Option<usize>,
}

impl Branch {
    /// Decisions on the path.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the path is empty (a branch at the root).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// Reservoir sampling (Vitter's algorithm R) over pruned branches: each of the `seen` branches
/// is kept with equal probability, from a seeded stream.
pub(super) struct PrunedSample {
    rng: rand_chacha::ChaCha8Rng,
    keep: usize,
    seen: u64,
    kept: Vec<Branch>,
}

impl PrunedSample {
    /// Whether the next pruned branch goes into the sample, and where.
    pub(super) fn slot(&mut self) -> Option<usize> {
        use rand::Rng;
        self.seen += 1;
        if self.kept.len() < self.keep {
            return Some(self.kept.len());
        }
        let j = self.rng.gen_range(0..self.seen);
        (j < self.keep as u64).then_some(j as usize)
    }

    /// The branches kept, and how many were pruned in all.
    pub(super) fn branches(&self) -> (&[Branch], u64) {
        (&self.kept, self.seen)
    }

    pub(super) fn put(&mut self, at: usize, branch: Branch) {
        if at == self.kept.len() {
            self.kept.push(branch);
        } else {
            self.kept[at] = branch;
        }
    }
}

impl Dfs {
    /// Keeps a seeded sample of up to `keep` branches that the reduction pruned (see
    /// `SearchProgress::pruned_sample`).
    pub fn sampling_pruned(mut self, keep: usize, seed: u64) -> Self {
        self.pruned_sample = (keep > 0).then(|| PrunedSample {
            rng: crate::strategy::run_rng(seed, u64::MAX),
            keep,
            seen: 0,
            kept: Vec::new(),
        });
        self
    }

    /// A search of every schedule below `branch` only (its decisions are followed, then every
    /// continuation explored).
    pub fn below(mut self, branch: &Branch) -> Self {
        let mut on_path = HashMap::new();
        self.stack = branch
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if let Some(state) = n.state {
                    on_path.entry(state).or_insert(i);
                }
                Node {
                    backtrack: BTreeSet::from([n.chosen]),
                    ..n.path_step(n.chosen)
                }
            })
            .collect();
        self.on_path = on_path;
        self
    }

    /// The current path down to the node at `depth`, then `option` there.
    fn branch_to(&self, depth: usize, option: Option<usize>) -> Branch {
        let mut nodes: Vec<Node> = self.stack[..depth]
            .iter()
            .map(|n| n.path_step(n.chosen))
            .collect();
        if let Some(o) = option {
            nodes.push(self.stack[depth].path_step(o));
        }
        Branch {
            nodes,
            bound: self.preemption_bound,
        }
    }

    /// Notes a branch the reduction pruned: the run cut at the current path's end (`option`
    /// `None`), or `option` left unexplored at the node at `depth`.
    pub(super) fn note_pruned(&mut self, depth: usize, option: Option<usize>) {
        let Some(slot) = self.pruned_sample.as_mut().and_then(PrunedSample::slot) else {
            return;
        };
        let branch = self.branch_to(depth, option);
        if let Some(sample) = &mut self.pruned_sample {
            sample.put(slot, branch);
        }
    }

    /// Notes the tasks the reduction never let go first at the deepest node (asleep, or no race
    /// asked), as the search leaves it.
    pub(super) fn note_skipped(&mut self) {
        if self.pruned_sample.is_none() || !self.owned {
            return;
        }
        let node = &self.stack[self.stack.len() - 1];
        let skipped: Vec<usize> = node
            .enabled
            .iter()
            .map(|t| t.0)
            .filter(|t| !node.done.contains(t) && self.within_bound(node, *t))
            .collect();
        for t in skipped {
            self.note_pruned(self.stack.len() - 1, Some(t));
        }
    }
}
