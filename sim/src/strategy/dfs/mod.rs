//! Exhaustive depth-first exploration of every schedule and every `choose` value, optionally
//! bounded in preemptions, and reduced by sleep sets and dynamic partial-order reduction
//! (Flanagan & Godefroid, POPL 2005) over the dependency relation the engine records: two steps
//! are dependent when they access a common object (lock, channel, notify, atomic, declared
//! shared state, the history) and one of them writes it.
//!
//! The strategy keeps the current path as a stack of decision nodes. Each run replays the
//! path's prefix and extends it; at the end of the run, races between dependent steps of
//! different tasks that are not ordered by happens-before add backtrack points, and the deepest
//! node with an unexplored option is taken next. Without reduction every enabled task is a
//! backtrack option (plain DFS, kept for measuring the reduction and testing its soundness).
//!
//! Under a preemption bound the reduction is Bounded POR (Coons, Musuvathi & McKinley, OOPSLA
//! 2013): the bound makes otherwise independent steps dependent (moving a task earlier can cost
//! a preemption), so each race also adds a conservative backtrack point at the last context
//! switch before it, where letting the task run costs no extra preemption; and sleep sets are
//! off, since the equivalent schedule a sleeping task stands for may lie outside the bound.
//!
//! The other reduction, visited states (`visited.rs`), keeps plain DFS's backtracking and stops
//! a run where it reaches a state whose continuations are already explored. It is the better
//! one under a preemption bound, where Bounded POR's conservative backtrack points leave most
//! of the plain search in place. Without a bound it keeps sleep sets as well (a state is covered
//! by a visit with no more tasks asleep). On a model whose state the engine sees whole, states
//! are identified by value rather than by trace (`by_value`), which is what lets an unbounded
//! search finish on models whose servers poll in loops.
//!
//! For parallel jobs and shards the search splits into subtrees at a fixed depth (`Split`):
//! above it every option is explored and no race adds backtrack points there, so every job walks
//! the same top of the tree in the same order; each subtree below is explored, with the full
//! reduction, by the job or shard whose `claim` accepts it. The union over jobs or shards is the
//! same set of schedules whoever explores what. The explorer hands out subtrees by a fixed
//! partition, and each job keeps its own visited states, so that what a parallel search
//! reports does not depend on thread timing (`sharing_visited` shares them, for a caller that
//! does not need that).

//! The files: `node.rs` (one decision of the path), `races.rs` (happens-before and the
//! backtrack points races ask for), `split.rs` (subtrees for jobs and shards), `pruned.rs`
//! (the audit's sample of pruned branches), `cycle.rs` (fair cycles by value); the path itself
//! and the walk over it are here.

mod cycle;
mod node;
mod pruned;
mod races;
mod split;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::visited::{TaskSet, TraceState, Visit, Visited};
use super::{Fingerprint, PickView, Reduction, RunNeeds, Scheduler, SearchProgress, Stop};
use crate::digest::mix;
use crate::vocab::TaskId;
use crate::vocab::{Access, RunResult};
use node::{Kind, Node};
pub use pruned::Branch;
use pruned::PrunedSample;
pub use split::Split;

/// Depth-first search of a model's schedules (see the module docs): every schedule, or every one
/// within a preemption bound, reduced or plain.
pub struct Dfs {
    /// Sleep sets and DPOR (Bounded POR under a bound).
    partial_order: bool,
    preemption_bound: Option<usize>,
    stack: Vec<Node>,
    /// Position in the stack during the current run.
    depth: usize,
    exhausted: bool,
    pruned: u64,
    split: Option<Split>,
    /// Subtrees met so far (split searches).
    subtrees: u64,
    /// Where the current run reached the split depth: the stack index of its subtree's root.
    split_root: Option<usize>,
    /// Whether the current run is this job's to count.
    owned: bool,
    /// Whether the current run stopped with every enabled task asleep, or at a visited state.
    cut_short: bool,
    /// States whose continuations are explored (visited-state reduction).
    visited: Option<Arc<Visited>>,
    /// The current run's state, for `visited`.
    trace: TraceState,
    /// Identify states by value (`PickView::state`) rather than by trace.
    by_value: bool,
    /// Sleep sets off (see `without_sleep_sets`).
    no_sleep_sets: bool,
    /// The task that took the current run's latest step.
    last_task: Option<usize>,
    /// States by value on the current path, and the stack index of the node at each.
    on_path: HashMap<u64, usize>,
    /// Whether the preemption bound kept the search from some option: without that, a bounded
    /// search that ends has explored every schedule.
    cut_by_bound: bool,
    /// A seeded sample of the branches the reduction pruned, for an audit (`crate::audit`).
    pruned_sample: Option<PrunedSample>,
    /// Going round a fair cycle a second time, to confirm it: the stack index of the cycle's
    /// first node, and of the node whose decision comes next.
    confirming: Option<(usize, usize)>,
}

impl Dfs {
    /// A DFS within `preemption_bound` preemptions (`None`: unbounded), reduced by `reduction`.
    pub fn new(preemption_bound: Option<usize>, reduction: Reduction) -> Self {
        Dfs {
            partial_order: reduction == Reduction::PartialOrder,
            preemption_bound,
            stack: Vec::new(),
            depth: 0,
            exhausted: false,
            pruned: 0,
            split: None,
            subtrees: 0,
            split_root: None,
            owned: true,
            cut_short: false,
            visited: (reduction == Reduction::VisitedStates).then(Arc::default),
            trace: TraceState::default(),
            by_value: false,
            no_sleep_sets: false,
            last_task: None,
            on_path: HashMap::new(),
            cut_by_bound: false,
            pruned_sample: None,
            confirming: None,
        }
    }

    /// With visited states, identifies a state by its values (object contents, task locals)
    /// rather than by its trace: for models whose state the engine sees whole
    /// (`Model::state_visible`).
    ///
    /// Plain DFS by value keeps no visited states but still watches its path for cycles (a
    /// fair one is a livelock, an unfair one is cut); partial-order reduction stays by trace
    /// (DPOR assumes runs that end).
    pub fn by_value(mut self) -> Self {
        self.by_value = !self.partial_order;
        self
    }

    /// Shares the visited states with the other jobs of one exploration (visited-state
    /// reduction only).
    pub fn sharing_visited(mut self, visited: &Arc<Visited>) -> Self {
        if self.visited.is_some() {
            self.visited = Some(visited.clone());
        }
        self
    }

    /// Whether visited states are identified by the run's trace (kept here, step by step).
    fn keeps_trace(&self) -> bool {
        self.visited.is_some() && !self.by_value
    }

    /// Sleep sets: with DPOR, or with visited states (Godefroid's state caching with sleep
    /// sets: a state is covered when it was explored with no more tasks asleep). Off under a
    /// preemption bound (see the module docs).
    fn sleep_sets(&self) -> bool {
        (self.partial_order || self.visited.is_some())
            && self.preemption_bound.is_none()
            && !self.no_sleep_sets
    }

    /// Visited states without sleep sets: for a model whose tasks yield fairly, where who may
    /// run next depends on who has moved since a task yielded, whatever each step touched, so
    /// steps that touch different objects are not independent (the generated-program
    /// differential found sleep sets missing violations behind fair yields). States still
    /// stand for their continuations when identified with whom each fair yield waits for: by
    /// value the state includes it; by trace `visit` adds it (`PickView::fairness`).
    pub fn without_sleep_sets(mut self) -> Self {
        self.no_sleep_sets = true;
        self
    }

    fn within_bound(&self, node: &Node, option: usize) -> bool {
        let extra = usize::from(node.is_preemption(option));
        self.preemption_bound
            .is_none_or(|b| node.preemptions + extra <= b)
    }

    /// The last task node above `depth` and the preemptions on the path up to `depth`.
    fn path_state(&self) -> (Option<usize>, usize) {
        let parent = self.stack[..self.depth]
            .iter()
            .rposition(|n| n.kind == Kind::Task);
        let preemptions = parent.map_or(0, |i| {
            let n = &self.stack[i];
            n.preemptions + usize::from(n.is_preemption(n.chosen))
        });
        (parent, preemptions)
    }

    /// Sleep set of a new task node: what slept at the parent, and the parent's explored
    /// siblings, minus whatever depends on the step just taken.
    fn inherited_sleep(&self, parent: Option<usize>, prev: &[Access]) -> Vec<(usize, Vec<Access>)> {
        let Some(p) = parent else {
            return Vec::new();
        };
        let node = &self.stack[p];
        let mut sleep: Vec<(usize, Vec<Access>)> = node
            .sleep
            .iter()
            .cloned()
            .chain(
                node.done
                    .iter()
                    .filter(|t| **t != node.chosen && !node.choosers.contains(t))
                    .filter_map(|t| node.step_accesses.get(t).map(|a| (*t, a.clone()))),
            )
            .filter(|(t, acc)| *t != node.chosen && !dependent(acc, prev))
            .collect();
        sleep.sort_by_key(|(t, _)| *t);
        sleep.dedup_by_key(|(t, _)| *t);
        sleep
    }

    /// Drops the deepest node of the path.
    fn pop(&mut self) {
        let at = self.stack.len().saturating_sub(1);
        if let Some(state) = self.stack.pop().and_then(|n| n.state) {
            if self.on_path.get(&state) == Some(&at) {
                self.on_path.remove(&state);
            }
        }
    }

    /// Moves to the deepest node with an unexplored option.
    fn advance(&mut self) {
        while let Some(node) = self.stack.last_mut() {
            node.done.insert(node.chosen);
            let next = node
                .backtrack
                .iter()
                .copied()
                .find(|o| !node.done.contains(o) && !node.asleep(*o));
            if let Some(o) = next {
                node.chosen = o;
                return;
            }
            self.note_skipped();
            self.pop();
        }
        self.exhausted = true;
    }

    /// The value for a `choose`: replayed on the path's prefix, else the first of a new node.
    fn choose_value(&mut self, n: usize) -> Result<usize, Stop> {
        if let Some((at, next)) = self.confirming {
            // The first round's value (a choice node follows the task node that drew it).
            let value = self.stack[next].chosen;
            self.confirming = Some((at, next + 1));
            return Ok(value);
        }
        if let Some(parent) = self.depth.checked_sub(1) {
            let node = &mut self.stack[parent];
            if node.kind == Kind::Task {
                node.choosers.insert(node.chosen);
            }
        }
        self.enter_subtree()?;
        if self.depth < self.stack.len() {
            let node = &self.stack[self.depth];
            self.depth += 1;
            return Ok(node.chosen);
        }
        let (_, preemptions) = self.path_state();
        self.stack.push(Node::choice(n, preemptions));
        self.depth += 1;
        Ok(0)
    }

    /// Records what the step just taken accessed, at its node and in the run's trace.
    fn note_last_step(&mut self, parent: Option<usize>, accesses: &[Access]) {
        if let Some(p) = parent {
            let node = &mut self.stack[p];
            node.step_accesses
                .entry(node.chosen)
                .or_insert_with(|| accesses.to_vec());
        }
        if let (true, Some(t)) = (self.keeps_trace(), self.last_task) {
            self.trace.step(t, accesses);
        }
    }

    /// On the path's prefix, the decision the path took there.
    fn replay_prefix(&mut self) -> Option<TaskId> {
        let node = self.stack.get(self.depth)?;
        let chosen = node.chosen;
        self.depth += 1;
        self.last_task = Some(chosen);
        Some(TaskId(chosen))
    }

    /// A new decision past the path's end: a new node, unless the reduction or a cycle cuts
    /// the run here.
    fn extend_path(
        &mut self,
        view: &PickView<'_>,
        parent: Option<usize>,
        preemptions: usize,
    ) -> Result<TaskId, Stop> {
        let current = view.current.filter(|c| view.enabled.contains(c));
        let sleep = if self.sleep_sets() {
            self.inherited_sleep(parent, view.prev_accesses)
        } else {
            Vec::new()
        };
        // By value, a schedule can come back to a state on its own path (a loop that changed
        // nothing): a livelock if the cycle is fair, else a starving cycle to cut.
        let fingerprint = view.fingerprint();
        let value_state = fingerprint.as_ref().map(|f| f.state);
        if let Some(state) = value_state {
            if let Some(decided) = self.revisit(state, view) {
                return decided;
            }
        }
        let only = self.visit(current, preemptions, &sleep, fingerprint, view.fairness)?;
        let node = Node::task(
            view.enabled.to_vec(),
            current,
            preemptions,
            sleep,
            value_state,
        );
        if !self.cut_by_bound {
            self.cut_by_bound = view.enabled.iter().any(|t| !self.within_bound(&node, t.0));
        }
        self.push_task_node(node, only)
    }

    /// Checks the state reached against the visited states (below the split): `Pruned` if a
    /// visit covers it, else the tasks left to explore from it (`None`: every one). By value, a
    /// state is keyed by its orbit under the model's symmetry: the running task and the tasks
    /// asleep are renamed as the orbit's key is, and the tasks left renamed back.
    fn visit(
        &mut self,
        current: Option<TaskId>,
        preemptions: usize,
        sleep: &[(usize, Vec<Access>)],
        value_state: Option<Fingerprint>,
        fairness: &dyn Fn() -> u64,
    ) -> Result<Option<TaskSet>, Stop> {
        if self.above_split(self.stack.len()) {
            return Ok(None);
        }
        let Some(visited) = &self.visited else {
            return Ok(None);
        };
        let rename = value_state.as_ref().map_or(&[][..], |f| &f.rename[..]);
        let to_orbit = |t: usize| rename.get(t).copied().unwrap_or(t);
        // Under a bound, which task runs without a preemption is part of the state.
        let running = current.filter(|_| self.preemption_bound.is_some());
        // By trace, a state leaves out who may run next under fairness: it joins the key (by
        // value, the fairness waits are part of the state already).
        let state = value_state.as_ref().map_or_else(
            || match fairness() {
                0 => self.trace.fingerprint(),
                f => mix(self.trace.fingerprint(), f),
            },
            |f| f.orbit,
        );
        let key = mix(state, running.map_or(0, |t| to_orbit(t.0) as u64 + 1));
        let asleep = TaskSet::of(sleep.iter().map(|(t, _)| to_orbit(*t)));
        match visited.visit(key, preemptions, asleep) {
            Visit::New => Ok(None),
            Visit::Covered => {
                self.cut_short = true;
                if self.owned {
                    self.note_pruned(self.depth, None);
                }
                Err(Stop::Pruned)
            }
            Visit::Partly(tasks) if rename.is_empty() => Ok(Some(tasks)),
            Visit::Partly(tasks) => Ok(Some(TaskSet::of(
                (0..rename.len()).filter(|t| tasks.contains(rename[*t])),
            ))),
        }
    }

    /// Takes the first of the node's candidates (the running task when it is one: no
    /// preemption), and pushes the node with the rest to explore; `Pruned` if none is left.
    fn push_task_node(&mut self, mut node: Node, only: Option<TaskSet>) -> Result<TaskId, Stop> {
        let current = node.current;
        let candidates: Vec<usize> = node
            .enabled
            .iter()
            .map(|t| t.0)
            .filter(|t| !node.asleep(*t) && self.within_bound(&node, *t))
            .filter(|t| only.as_ref().is_none_or(|tasks| tasks.contains(*t)))
            .collect();
        // Non-preemptive first: keep running the current task when it can.
        let Some(&first) = candidates
            .iter()
            .find(|t| current.is_some_and(|c| c.0 == **t))
            .or(candidates.first())
        else {
            self.cut_short = true;
            if self.owned && !node.sleep.is_empty() {
                self.note_pruned(self.depth, None);
            }
            return Err(Stop::Pruned);
        };
        node.chosen = first;
        node.backtrack = if self.partial_order && !self.above_split(self.stack.len()) {
            BTreeSet::from([first])
        } else {
            candidates.into_iter().collect()
        };
        if let Some(state) = node.state {
            // The earliest visit on the path stands for the state (a cycle returns to it).
            self.on_path.entry(state).or_insert(self.stack.len());
        }
        self.stack.push(node);
        self.depth += 1;
        self.last_task = Some(first);
        Ok(TaskId(first))
    }
}

impl Scheduler for Dfs {
    fn begin_run(&mut self, _run: u64) -> RunNeeds {
        self.confirming = None;
        self.depth = 0;
        self.split_root = None;
        self.owned = true;
        self.cut_short = false;
        self.trace.reset();
        self.last_task = None;
        RunNeeds {
            value_state: self.by_value,
            ..RunNeeds::SEARCH
        }
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        let (parent, preemptions) = self.path_state();
        self.note_last_step(parent, view.prev_accesses);
        self.enter_subtree()?;
        if let Some(task) = self.replay_prefix() {
            return Ok(task);
        }
        if let Some((at, next)) = self.confirming {
            return self.confirm_cycle(at, next, view);
        }
        self.extend_path(view, parent, preemptions)
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
        let value = self.choose_value(n)?;
        if let (true, Some(t)) = (self.keeps_trace(), self.last_task) {
            self.trace.chose(t, value);
        }
        Ok(value)
    }

    fn end_run(&mut self, run: &RunResult) {
        // Nodes past the point where the run stopped were never reached (a violation ends the
        // run early): drop them.
        while self.stack.len() > self.depth {
            self.pop();
        }
        if self.split.is_some() && self.split_root.is_none() {
            // A run that ends above the split is a subtree of its own.
            self.owned = self.claim_next();
        }
        if self.cut_short && self.owned {
            self.pruned += 1;
        }
        if self.partial_order && self.owned {
            // A pruned run's prefix still shows races worth backtracking for.
            self.analyse_races(run);
        }
        self.advance();
    }

    fn progress(&self) -> SearchProgress<'_> {
        let (pruned_sample, pruned_branches) = self
            .pruned_sample
            .as_ref()
            .map_or((&[][..], 0), PrunedSample::branches);
        SearchProgress {
            exhausted: self.exhausted,
            pruned: self.pruned,
            cut_by_bound: self.cut_by_bound,
            counts_last_run: self.owned,
            pruned_sample,
            pruned_branches,
            plan: None,
        }
    }
}

fn dependent(a: &[Access], b: &[Access]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.conflicts(y)))
}
