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

use std::collections::{BTreeMap, BTreeSet};

use super::{PickView, Stop, Strategy};
use crate::rt::TaskId;
use crate::run::{Access, AccessKind, RunResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Task,
    Choice { n: usize },
}

#[derive(Debug)]
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
}

impl Node {
    fn is_preemption(&self, option: usize) -> bool {
        self.kind == Kind::Task && self.current.is_some_and(|c| c.0 != option)
    }

    fn asleep(&self, task: usize) -> bool {
        self.sleep.iter().any(|(t, _)| *t == task)
    }
}

/// The accesses of one object a later access could race with: the last write, and the reads and
/// commuting updates since (everything older happens before one of these).
#[derive(Default)]
struct Frontier {
    last_write: Option<usize>,
    since: Vec<(usize, AccessKind)>,
}

impl Frontier {
    fn conflicting(&self, kind: AccessKind) -> impl Iterator<Item = usize> + '_ {
        self.last_write.into_iter().chain(
            self.since
                .iter()
                .filter(move |(_, k)| k.conflicts_with(kind))
                .map(|(j, _)| *j),
        )
    }

    fn record(&mut self, step: usize, kind: AccessKind) {
        if kind == AccessKind::Write {
            self.last_write = Some(step);
            self.since.clear();
        } else {
            self.since.push((step, kind));
        }
    }
}

fn dependent(a: &[Access], b: &[Access]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.conflicts(y)))
}

pub struct Dfs {
    reduction: bool,
    preemption_bound: Option<usize>,
    stack: Vec<Node>,
    /// Position in the stack during the current run.
    depth: usize,
    exhausted: bool,
    pruned: u64,
}

impl Dfs {
    pub fn new(preemption_bound: Option<usize>, reduction: bool) -> Self {
        Dfs {
            reduction,
            preemption_bound,
            stack: Vec::new(),
            depth: 0,
            exhausted: false,
            pruned: 0,
        }
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
                    .filter(|t| **t != node.chosen)
                    .filter_map(|t| node.step_accesses.get(t).map(|a| (*t, a.clone()))),
            )
            .filter(|(t, acc)| *t != node.chosen && !dependent(acc, prev))
            .collect();
        sleep.sort_by_key(|(t, _)| *t);
        sleep.dedup_by_key(|(t, _)| *t);
        sleep
    }

    /// Adds backtrack points for the races in the run just finished (Flanagan-Godefroid): for
    /// each step i of task p, the last earlier step j of another task that conflicts with i,
    /// could have run in either order (p was not parked on i, disabled, at j), and does not
    /// happen before p's previous step. Exploring p first at j exposes any earlier race in a
    /// later run.
    ///
    /// Happens-before is tracked with vector clocks, and per object only the frontier of
    /// accesses a new access could race with (the last write and the reads and commuting
    /// updates since): anything older happens before that frontier.
    fn analyse_races(&mut self, run: &RunResult) {
        let nodes: Vec<usize> = (0..self.stack.len())
            .filter(|&i| self.stack[i].kind == Kind::Task)
            .collect();
        let steps = nodes.len().min(run.accesses.len());
        let task_of: Vec<usize> = nodes.iter().map(|&n| self.stack[n].chosen).collect();
        let tasks = task_of.iter().max().map_or(0, |m| m + 1);
        // clock[i * tasks + t]: how many of task t's steps happen before step i (incl. i).
        let mut clock = vec![0u32; steps * tasks];
        let mut last_of: Vec<Option<usize>> = vec![None; tasks];
        let mut frontier: Vec<Frontier> = Vec::new();
        let mut backtracks = Vec::new();
        for i in 0..steps {
            let p = task_of[i];
            let (done, row) = clock.split_at_mut(i * tasks);
            let row = &mut row[..tasks];
            let prev = last_of[p];
            if let Some(l) = prev {
                row.copy_from_slice(&done[l * tasks..(l + 1) * tasks]);
            }
            // p's clock before this step: what happens before its previous step.
            let before_p = row.to_vec();
            let mut race: Option<usize> = None;
            for access in run.accesses.step(i) {
                let obj = access.obj.0;
                if frontier.len() <= obj {
                    frontier.resize_with(obj + 1, Frontier::default);
                }
                for j in frontier[obj].conflicting(access.kind) {
                    let q = task_of[j];
                    let cj = &done[j * tasks..(j + 1) * tasks];
                    for (r, c) in row.iter_mut().zip(cj) {
                        *r = (*r).max(*c);
                    }
                    if q == p || cj[q] <= before_p[q] {
                        continue;
                    }
                    // p was already parked on this very operation at j, and disabled there: j is
                    // what let it run (a release), so the two could not go in the other order.
                    let parked = prev.is_none_or(|l| l < j);
                    let disabled = !self.stack[nodes[j]].enabled.iter().any(|t| t.0 == p);
                    if !(parked && disabled) && race.is_none_or(|r| r < j) {
                        race = Some(j);
                    }
                }
            }
            for access in run.accesses.step(i) {
                frontier[access.obj.0].record(i, access.kind);
            }
            row[p] += 1;
            last_of[p] = Some(i);
            if let Some(j) = race {
                backtracks.push((nodes[j], p));
            }
        }
        for (at, task) in backtracks {
            self.add_backtrack(at, task);
        }
    }

    /// At the state before step `at`, let `task` go first if it could; else try everyone.
    fn add_backtrack(&mut self, at: usize, task: usize) {
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
            self.stack.pop();
        }
        self.exhausted = true;
    }
}

impl Strategy for Dfs {
    fn begin_run(&mut self, _run: u64) {
        self.depth = 0;
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        let (parent, preemptions) = self.path_state();
        if let Some(p) = parent {
            let node = &mut self.stack[p];
            node.step_accesses
                .entry(node.chosen)
                .or_insert_with(|| view.prev_accesses.to_vec());
        }
        if self.depth < self.stack.len() {
            let node = &self.stack[self.depth];
            self.depth += 1;
            return Ok(TaskId(node.chosen));
        }
        let current = view.current.filter(|c| view.enabled.contains(c));
        let mut node = Node {
            kind: Kind::Task,
            enabled: view.enabled.to_vec(),
            current,
            preemptions,
            chosen: 0,
            backtrack: BTreeSet::new(),
            done: BTreeSet::new(),
            sleep: if self.reduction {
                self.inherited_sleep(parent, view.prev_accesses)
            } else {
                Vec::new()
            },
            step_accesses: BTreeMap::new(),
        };
        let candidates: Vec<usize> = view
            .enabled
            .iter()
            .map(|t| t.0)
            .filter(|t| !node.asleep(*t) && self.within_bound(&node, *t))
            .collect();
        // Non-preemptive first: keep running the current task when it can.
        let Some(&first) = candidates
            .iter()
            .find(|t| current.is_some_and(|c| c.0 == **t))
            .or(candidates.first())
        else {
            self.pruned += 1;
            return Err(Stop::Pruned);
        };
        node.chosen = first;
        node.backtrack = if self.reduction {
            BTreeSet::from([first])
        } else {
            candidates.into_iter().collect()
        };
        self.stack.push(node);
        self.depth += 1;
        Ok(TaskId(first))
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
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
        });
        self.depth += 1;
        Ok(0)
    }

    fn end_run(&mut self, run: &RunResult) {
        // Nodes past the point where the run stopped were never reached (a violation ends the
        // run early): drop them.
        self.stack.truncate(self.depth);
        if self.reduction {
            // A pruned run's prefix still shows races worth backtracking for.
            self.analyse_races(run);
        }
        self.advance();
    }

    fn exhausted(&self) -> bool {
        self.exhausted
    }

    fn pruned(&self) -> u64 {
        self.pruned
    }
}
