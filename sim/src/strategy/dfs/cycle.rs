//! Cycles on the search's path, by value (see `livelock.rs`): coming back to a state on its
//! own path by a fair cycle is confirmed by going round once more (a livelock, or hidden
//! state); an unfair cycle is cut.

use super::node::Kind;
use super::Dfs;
use crate::strategy::livelock::{self, PathStep};
use crate::strategy::{PickView, Stop};
use crate::vocab::TaskId;

impl Dfs {
    /// Whether the path from the node at `at` to the state now is a fair cycle (see
    /// `livelock.rs`).
    fn is_fair_cycle(&self, at: usize) -> bool {
        let cycle = self.stack[at..].iter().filter(|n| n.kind == Kind::Task);
        livelock::is_fair(cycle.map(|n| PathStep {
            enabled: &n.enabled,
            chosen: n.chosen,
        }))
    }

    /// The second round of the cycle that starts at node `at`, now at its node `next` (the end
    /// of the stack: back at the start, confirmed): the state must be the first round's, and
    /// the decision is the first round's.
    pub(super) fn confirm_cycle(
        &mut self,
        at: usize,
        next: usize,
        view: &PickView<'_>,
    ) -> Result<TaskId, Stop> {
        let start = self.stack[..at]
            .iter()
            .filter(|n| n.kind == Kind::Task)
            .count();
        let (expected, chosen) = match self.stack.get(next) {
            Some(node) => (node.state, Some(node.chosen)),
            None => (self.stack[at].state, None),
        };
        if view.state() != expected {
            self.confirming = None;
            return Err(Stop::HiddenState(livelock::hidden_state(start, view.step)));
        }
        let Some(chosen) = chosen else {
            self.confirming = None;
            let ran: Vec<&str> = self.stack[at..]
                .iter()
                .filter(|n| n.kind == Kind::Task)
                .map(|n| view.name(TaskId(n.chosen)))
                .collect();
            return Err(Stop::Livelock(livelock::message(start, view.step, &ran)));
        };
        self.confirming = Some((at, next + 1));
        Ok(TaskId(chosen))
    }

    /// A new decision at `state`, already on the path: go round a fair cycle once more; cut an
    /// unfair one under plain DFS (its first visit, still on the path, explores every task);
    /// with visited states, go on (they decide what is left, as for any state reached again).
    pub(super) fn revisit(
        &mut self,
        state: u64,
        view: &PickView<'_>,
    ) -> Option<Result<TaskId, Stop>> {
        let &at = self.on_path.get(&state)?;
        if self.is_fair_cycle(at) {
            // Go round once more, following the same decisions: a model that keeps all its
            // state visible comes back the same way.
            return Some(self.confirm_cycle(at, at, view));
        }
        if self.visited.is_none() {
            self.cut_short = true;
            return Some(Err(Stop::Pruned));
        }
        None
    }
}
