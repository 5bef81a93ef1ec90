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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::livelock::{self, PathStep};
use super::visited::{sleep_set, TraceState, Visit, Visited};
use super::{PickView, Reduction, Stop, Strategy};
use crate::rt::digest::mix;
use crate::rt::TaskId;
use crate::run::{Access, AccessKind, RunResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Task,
    Choice { n: usize },
}

#[derive(Clone, Debug)]
struct Node {
    kind: Kind,
    /// Enabled tasks at this state (task nodes).
    enabled: Vec<TaskId>,
    /// The task that held the baton and is still enabled (a switch away preempts it).
    current: Option<TaskId>,
    /// Preemptions on the path before this node.
    preemptions: usize,
    /// The option (task index or value) taken in the current run.
    chosen: usize,
    /// Options to explore from this node.
    backtrack: BTreeSet<usize>,
    /// Options already explored from this node.
    done: BTreeSet<usize>,
    /// Tasks asleep here: exploring them would repeat an equivalent schedule.
    sleep: Vec<(usize, Vec<Access>)>,
    /// What the step of each explored task accessed (task nodes).
    step_accesses: BTreeMap<usize, Vec<Access>>,
    /// The state by value before this step (task nodes, when searching by value).
    state: Option<u64>,
    /// Explored tasks whose step here drew a `choose` value: what such a step accesses depends
    /// on the value, so one run's accesses cannot stand for it in a sleep set.
    choosers: BTreeSet<usize>,
}

impl Node {
    fn is_preemption(&self, option: usize) -> bool {
        self.kind == Kind::Task && self.current.is_some_and(|c| c.0 != option)
    }

    /// This node as a step of a path taking `chosen`: what a search below it needs, without
    /// the record of what was explored from it.
    fn path_step(&self, chosen: usize) -> Node {
        Node {
            kind: self.kind,
            enabled: self.enabled.clone(),
            current: self.current,
            preemptions: self.preemptions,
            chosen,
            backtrack: BTreeSet::new(),
            done: BTreeSet::new(),
            sleep: Vec::new(),
            step_accesses: BTreeMap::new(),
            state: self.state,
            choosers: self.choosers.clone(),
        }
    }

    fn asleep(&self, task: usize) -> bool {
        self.sleep.iter().any(|(t, _)| *t == task)
    }
}

/// A backtrack point to add at a node.
enum Request {
    /// Let this task go first (or, if it is not enabled there, every task).
    Task(usize),
    /// Let one of these tasks go first (the first that can, in order of preference).
    AnyOf(Vec<usize>),
}

/// Happens-before between the steps of a run: program order plus the order of conflicting
/// accesses, as vector clocks.
struct HappensBefore<'a> {
    tasks: usize,
    task_of: &'a [usize],
    /// clock[i * tasks + t]: how many of task t's steps happen before step i (incl. i).
    clock: Vec<u32>,
}

impl<'a> HappensBefore<'a> {
    fn of(run: &RunResult, task_of: &'a [usize], tasks: usize, steps: usize) -> Self {
        let mut clock = vec![0u32; steps * tasks];
        let mut last_of: Vec<Option<usize>> = vec![None; tasks];
        let mut by_object: Vec<Vec<(usize, AccessKind)>> = Vec::new();
        for (i, &p) in task_of.iter().enumerate().take(steps) {
            let (done, row) = clock.split_at_mut(i * tasks);
            let row = &mut row[..tasks];
            // A task's first step happens after the step that spawned it.
            if let Some(l) = last_of[p].or_else(|| spawned_before(run, p, i)) {
                row.copy_from_slice(&done[l * tasks..(l + 1) * tasks]);
            }
            for access in run.accesses.step(i) {
                let obj = access.obj.0;
                if by_object.len() <= obj {
                    by_object.resize_with(obj + 1, Vec::new);
                }
                for (j, _) in by_object[obj]
                    .iter()
                    .filter(|(_, kind)| kind.conflicts_with(access.kind))
                {
                    let cj = &done[j * tasks..(j + 1) * tasks];
                    for (r, c) in row.iter_mut().zip(cj) {
                        *r = (*r).max(*c);
                    }
                }
            }
            for access in run.accesses.step(i) {
                by_object[access.obj.0].push((i, access.kind));
            }
            row[p] += 1;
            last_of[p] = Some(i);
        }
        HappensBefore {
            tasks,
            task_of,
            clock,
        }
    }

    fn clock(&self, step: usize) -> &[u32] {
        &self.clock[step * self.tasks..(step + 1) * self.tasks]
    }

    /// Whether step `a` happens before step `b` (or is it).
    fn before(&self, a: usize, b: usize) -> bool {
        let t = self.task_of[a];
        self.clock(b)[t] >= self.clock(a)[t]
    }

    /// The tasks that could go first among the steps after `j` up to `i` that do not happen
    /// after j: each one's first such step has no predecessor among them.
    fn initials(&self, j: usize, i: usize) -> Vec<usize> {
        let mut independent: Vec<usize> = Vec::new();
        let mut seen = vec![false; self.tasks];
        let mut initials = Vec::new();
        for k in j + 1..=i {
            if k != i && self.before(j, k) {
                continue;
            }
            let t = self.task_of[k];
            if !seen[t] {
                seen[t] = true;
                if !independent.iter().any(|&m| self.before(m, k)) {
                    initials.push(t);
                }
            }
            independent.push(k);
        }
        initials
    }
}

/// The steps before `j` at which the running task changed (and step 0): where a task can be
/// let go first without preempting one that could run on.
fn context_switches(task_of: &[usize], j: usize) -> impl Iterator<Item = usize> + '_ {
    (0..j).filter(move |&k| k == 0 || task_of[k - 1] != task_of[k])
}

/// The step that spawned task `task`, if a task spawned it before step `before`.
fn spawned_before(run: &RunResult, task: usize, before: usize) -> Option<usize> {
    run.spawned_at
        .get(task)
        .copied()
        .flatten()
        .filter(|&s| s < before)
}

fn dependent(a: &[Access], b: &[Access]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.conflicts(y)))
}

/// Where the search splits into subtrees, and who explores which (see the module docs).
pub struct Split {
    /// Branching decision nodes (two or more options) above the subtrees' roots.
    pub depth: usize,
    /// Called with each subtree's index, in the same order in every job: true means explore it
    /// here.
    pub claim: Box<dyn FnMut(u64) -> bool>,
}

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

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// Reservoir sampling (Vitter's algorithm R) over pruned branches: each of the `seen` branches
/// is kept with equal probability, from a seeded stream.
struct PrunedSample {
    rng: rand_chacha::ChaCha8Rng,
    keep: usize,
    seen: u64,
    kept: Vec<Branch>,
}

impl PrunedSample {
    /// Whether the next pruned branch goes into the sample, and where.
    fn slot(&mut self) -> Option<usize> {
        use rand::Rng;
        self.seen += 1;
        if self.kept.len() < self.keep {
            return Some(self.kept.len());
        }
        let j = self.rng.gen_range(0..self.seen);
        (j < self.keep as u64).then_some(j as usize)
    }

    fn put(&mut self, at: usize, branch: Branch) {
        if at == self.kept.len() {
            self.kept.push(branch);
        } else {
            self.kept[at] = branch;
        }
    }
}

impl Dfs {
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

    /// Keeps a seeded sample of up to `keep` branches that the reduction pruned (see
    /// `pruned_branches`).
    pub fn sampling_pruned(mut self, keep: usize, seed: u64) -> Self {
        self.pruned_sample = (keep > 0).then(|| PrunedSample {
            rng: super::run_rng(seed, u64::MAX),
            keep,
            seen: 0,
            kept: Vec::new(),
        });
        self
    }

    /// The sampled pruned branches, and how many branches were pruned in all.
    pub fn pruned_branches(&self) -> (Vec<Branch>, u64) {
        self.pruned_sample
            .as_ref()
            .map_or((Vec::new(), 0), |s| (s.kept.clone(), s.seen))
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
    fn note_pruned(&mut self, depth: usize, option: Option<usize>) {
        let Some(slot) = self.pruned_sample.as_mut().and_then(PrunedSample::slot) else {
            return;
        };
        let branch = self.branch_to(depth, option);
        if let Some(sample) = &mut self.pruned_sample {
            sample.put(slot, branch);
        }
    }

    /// Explores only the subtrees `split.claim` accepts.
    pub fn with_split(mut self, split: Split) -> Self {
        self.split = Some(split);
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

    /// Visited states by value without sleep sets: for a model whose tasks yield fairly, where
    /// who may run next depends on who has moved since a task yielded, whatever each step
    /// touched, so steps that touch different objects are not independent (the generated-
    /// program differential found sleep sets missing violations behind fair yields). States
    /// identified by value, fairness waits included, still stand for their continuations.
    pub fn without_sleep_sets(mut self) -> Self {
        self.no_sleep_sets = true;
        self
    }

    /// Whether a node at stack index `at` lies above the split (every option explored).
    fn above_split(&self, at: usize) -> bool {
        self.split.is_some() && self.split_root.is_none_or(|root| at < root)
    }

    /// The next subtree in walk order: whether this job explores it.
    fn claim_next(&mut self) -> bool {
        let k = self.subtrees;
        self.subtrees += 1;
        self.split.as_mut().is_none_or(|s| (s.claim)(k))
    }

    /// At a decision point: a run reaching the split depth on a new path enters a new subtree;
    /// an unclaimed one ends here.
    fn enter_subtree(&mut self) -> Result<(), Stop> {
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

    /// Adds backtrack points for the races in the run just finished (source sets, Abdulla et
    /// al., POPL 2014). A race is a step j and a later step i of another task p that conflict
    /// and are not ordered by happens-before through p's earlier steps. To reverse it, some task
    /// must go first at j that starts the steps between j and i not happening after j, followed
    /// by i: one of those initials is enough. When p was parked on i's operation and disabled at
    /// j (j released it), p itself cannot go first; if no other initial could, the two steps
    /// cannot be reordered at all.
    fn analyse_races(&mut self, run: &RunResult) {
        let nodes: Vec<usize> = (0..self.stack.len())
            .filter(|&i| self.stack[i].kind == Kind::Task)
            .collect();
        let steps = nodes.len().min(run.accesses.len());
        let task_of: Vec<usize> = nodes.iter().map(|&n| self.stack[n].chosen).collect();
        let tasks = task_of.iter().max().map_or(0, |m| m + 1);
        let hb = HappensBefore::of(run, &task_of, tasks, steps);
        let bounded = self.preemption_bound.is_some();
        let mut last_of: Vec<Option<usize>> = vec![None; tasks];
        let mut by_object: Vec<Vec<(usize, AccessKind)>> = Vec::new();
        let mut requests: Vec<(usize, Request)> = Vec::new();
        for i in 0..steps {
            let p = task_of[i];
            // Before its first step, a task's program order starts at its spawn.
            let prev = last_of[p].or_else(|| spawned_before(run, p, i));
            let mut races: Vec<usize> = Vec::new();
            for access in run.accesses.step(i) {
                let obj = access.obj.0;
                if by_object.len() <= obj {
                    by_object.resize_with(obj + 1, Vec::new);
                }
                races.extend(
                    by_object[obj]
                        .iter()
                        .filter(|(j, kind)| {
                            kind.conflicts_with(access.kind)
                                && task_of[*j] != p
                                && prev.is_none_or(|l| !hb.before(*j, l))
                        })
                        .map(|(j, _)| *j),
                );
            }
            for access in run.accesses.step(i) {
                by_object[access.obj.0].push((i, access.kind));
            }
            last_of[p] = Some(i);
            races.sort_unstable();
            races.dedup();
            for j in races {
                let parked = prev.is_none_or(|l| l < j);
                let disabled = !self.stack[nodes[j]].enabled.iter().any(|t| t.0 == p);
                let mut initials = hb.initials(j, i);
                if parked && disabled {
                    initials.retain(|t| *t != p);
                    if initials.is_empty() {
                        continue;
                    }
                } else if let Some(at) = initials.iter().position(|t| *t == p) {
                    // Prefer the racing task itself, as classic DPOR would.
                    initials[..=at].rotate_right(1);
                }
                requests.push((nodes[j], Request::AnyOf(initials)));
                if bounded {
                    // The context switches before j, where letting p go first may cost no
                    // extra preemption (see the module docs).
                    for switch in context_switches(&task_of, j) {
                        requests.push((nodes[switch], Request::Task(p)));
                    }
                }
            }
        }
        // Operations parked at the run's end (a blocked task, or one the run stopped before,
        // at a violation) never ran, yet they race too: with an earlier conflicting step at
        // which their task was already enabled, it could have gone first there.
        for &(p, obj) in &run.pending {
            let prev = last_of
                .get(p)
                .copied()
                .flatten()
                .or_else(|| spawned_before(run, p, steps));
            let Some(accesses) = by_object.get(obj.0) else {
                continue;
            };
            for &(j, _) in accesses {
                if task_of[j] == p || prev.is_some_and(|l| hb.before(j, l)) {
                    continue;
                }
                if !self.stack[nodes[j]].enabled.iter().any(|t| t.0 == p) {
                    continue;
                }
                requests.push((nodes[j], Request::Task(p)));
                if bounded {
                    // The context switches before j, where letting p go first may cost no
                    // extra preemption (see the module docs).
                    for switch in context_switches(&task_of, j) {
                        requests.push((nodes[switch], Request::Task(p)));
                    }
                }
            }
        }
        // A violation ends the run inside its last step: any task enabled there could have
        // gone first and led elsewhere, so that step conflicts with every other task's next.
        if let (true, Some(last)) = (run.violation().is_some(), steps.checked_sub(1)) {
            let node = &self.stack[nodes[last]];
            let others: Vec<usize> = node
                .enabled
                .iter()
                .map(|t| t.0)
                .filter(|t| *t != task_of[last])
                .collect();
            for t in others {
                requests.push((nodes[last], Request::Task(t)));
                if bounded {
                    for switch in context_switches(&task_of, last) {
                        requests.push((nodes[switch], Request::Task(t)));
                    }
                }
            }
        }
        for (at, request) in requests {
            match request {
                Request::Task(task) => self.add_backtrack(at, task),
                Request::AnyOf(tasks) => self.add_any_of(at, &tasks),
            }
        }
    }

    /// At the state before step `at`, let `task` go first if it could; else try everyone.
    fn add_backtrack(&mut self, at: usize, task: usize) {
        if self.above_split(at) {
            return;
        }
        let node = &self.stack[at];
        let options: Vec<usize> = if node.enabled.iter().any(|t| t.0 == task) {
            vec![task]
        } else {
            node.enabled.iter().map(|t| t.0).collect()
        };
        let options: Vec<usize> = options
            .into_iter()
            .filter(|o| !node.asleep(*o) && self.within_bound(node, *o))
            .collect();
        self.stack[at].backtrack.extend(options);
    }

    /// At the state before step `at`, let one of `tasks` go first, unless one already does.
    fn add_any_of(&mut self, at: usize, tasks: &[usize]) {
        if self.above_split(at) {
            return;
        }
        let node = &self.stack[at];
        let enabled: Vec<usize> = tasks
            .iter()
            .copied()
            .filter(|t| node.enabled.iter().any(|e| e.0 == *t))
            .collect();
        if enabled
            .iter()
            .any(|t| node.backtrack.contains(t) || node.done.contains(t) || node.chosen == *t)
        {
            return;
        }
        if let Some(&t) = enabled
            .iter()
            .find(|t| !node.asleep(**t) && self.within_bound(node, **t))
        {
            self.stack[at].backtrack.insert(t);
        }
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
    fn confirm_cycle(
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
            if self.pruned_sample.is_some() && self.owned {
                // Tasks the reduction never let go first here (asleep, or no race asked).
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
        self.stack.push(Node {
            kind: Kind::Choice { n },
            enabled: Vec::new(),
            current: None,
            preemptions,
            chosen: 0,
            backtrack: (0..n).collect(),
            done: BTreeSet::new(),
            sleep: Vec::new(),
            step_accesses: BTreeMap::new(),
            state: None,
            choosers: BTreeSet::new(),
        });
        self.depth += 1;
        Ok(0)
    }
}

impl Strategy for Dfs {
    fn begin_run(&mut self, _run: u64) {
        self.confirming = None;
        self.depth = 0;
        self.split_root = None;
        self.owned = true;
        self.cut_short = false;
        self.trace.reset();
        self.last_task = None;
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        let (parent, preemptions) = self.path_state();
        if let Some(p) = parent {
            let node = &mut self.stack[p];
            node.step_accesses
                .entry(node.chosen)
                .or_insert_with(|| view.prev_accesses.to_vec());
        }
        if let (true, Some(t)) = (self.keeps_trace(), self.last_task) {
            self.trace.step(t, view.prev_accesses);
        }
        self.enter_subtree()?;
        if self.depth < self.stack.len() {
            let node = &self.stack[self.depth];
            self.depth += 1;
            self.last_task = Some(node.chosen);
            return Ok(TaskId(node.chosen));
        }
        if let Some((at, next)) = self.confirming {
            return self.confirm_cycle(at, next, view);
        }
        let current = view.current.filter(|c| view.enabled.contains(c));
        let sleep = if self.sleep_sets() {
            self.inherited_sleep(parent, view.prev_accesses)
        } else {
            Vec::new()
        };
        let mut only = None;
        // By value, a schedule can come back to a state on its own path (a loop that changed
        // nothing): a livelock if the cycle is fair, else a starving cycle to cut.
        let value_state = view.state();
        if let Some(state) = value_state {
            if let Some(&at) = self.on_path.get(&state) {
                if self.is_fair_cycle(at) {
                    // Go round once more, following the same decisions: a model that keeps
                    // all its state visible comes back the same way.
                    return self.confirm_cycle(at, at, view);
                }
                // An unfair cycle: the visited states decide what is left, as for any
                // state reached again (the first visit, still on the path, explores the rest);
                // plain DFS cuts it, since that first visit explores every task.
                if self.visited.is_none() {
                    self.cut_short = true;
                    return Err(Stop::Pruned);
                }
            }
        }
        if !self.above_split(self.stack.len()) {
            if let Some(visited) = &self.visited {
                // Under a bound, which task runs without a preemption is part of the state.
                let running = current.filter(|_| self.preemption_bound.is_some());
                let state = value_state.unwrap_or_else(|| self.trace.fingerprint());
                let key = mix(state, running.map_or(0, |t| t.0 as u64 + 1));
                match visited.visit(key, preemptions, sleep_set(&sleep)) {
                    Visit::New => {}
                    Visit::Covered => {
                        self.cut_short = true;
                        if self.owned {
                            self.note_pruned(self.depth, None);
                        }
                        return Err(Stop::Pruned);
                    }
                    Visit::Partly(tasks) => only = Some(tasks),
                }
            }
        }
        let mut node = Node {
            kind: Kind::Task,
            enabled: view.enabled.to_vec(),
            current,
            preemptions,
            chosen: 0,
            backtrack: BTreeSet::new(),
            done: BTreeSet::new(),
            sleep,
            step_accesses: BTreeMap::new(),
            state: value_state,
            choosers: BTreeSet::new(),
        };
        if !self.cut_by_bound {
            self.cut_by_bound = view.enabled.iter().any(|t| !self.within_bound(&node, t.0));
        }
        let candidates: Vec<usize> = view
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
        if let Some(state) = value_state {
            // The earliest visit on the path stands for the state (a cycle returns to it).
            self.on_path.entry(state).or_insert(self.stack.len());
        }
        self.stack.push(node);
        self.depth += 1;
        self.last_task = Some(first);
        Ok(TaskId(first))
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

    fn exhausted(&self) -> bool {
        self.exhausted
    }

    fn wants_value_state(&self) -> bool {
        self.by_value
    }

    fn pruned(&self) -> u64 {
        self.pruned
    }

    fn cut_by_bound(&self) -> bool {
        self.cut_by_bound
    }

    fn pruned_branches(&self) -> (Vec<Branch>, u64) {
        Dfs::pruned_branches(self)
    }

    fn counts_last_run(&self) -> bool {
        self.owned
    }
}
