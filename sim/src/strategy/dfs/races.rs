//! Race analysis for source-set DPOR (Abdulla et al., POPL 2014; Bounded POR under a bound):
//! happens-before between a finished run's steps as vector clocks, the races it leaves
//! unordered, and the backtrack points that would reverse them.

use super::node::{Kind, Node};
use super::Dfs;
use crate::vocab::{AccessKind, RunResult};

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
            for access in step_accesses(run, i) {
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
            for access in step_accesses(run, i) {
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

/// One finished run's steps as the race analysis reads them, and the backtrack points it asks
/// for, in the order found (the order they are added in decides the walk).
struct RaceScan<'a> {
    run: &'a RunResult,
    stack: &'a [Node],
    /// Per step, the stack index of its task node, and the task that took it.
    nodes: &'a [usize],
    task_of: &'a [usize],
    hb: HappensBefore<'a>,
    bounded: bool,
    /// Per task, its last step so far; per object, the steps so far that accessed it.
    last_of: Vec<Option<usize>>,
    by_object: Vec<Vec<(usize, AccessKind)>>,
    requests: Vec<(usize, Request)>,
}

impl RaceScan<'_> {
    /// Step `i`: its races with earlier steps of other tasks, each asked to be reversed.
    fn step(&mut self, i: usize) {
        let p = self.task_of[i];
        // Before its first step, a task's program order starts at its spawn.
        let prev = self.last_of[p].or_else(|| spawned_before(self.run, p, i));
        let races = self.races_of(i, p, prev);
        self.last_of[p] = Some(i);
        for j in races {
            self.reverse(j, i, p, prev);
        }
    }

    /// The earlier steps of other tasks that conflict with step `i` of task `p` (whose
    /// previous step is `prev`) and do not happen before it; records step `i`'s accesses.
    fn races_of(&mut self, i: usize, p: usize, prev: Option<usize>) -> Vec<usize> {
        let mut races: Vec<usize> = Vec::new();
        for access in step_accesses(self.run, i) {
            let obj = access.obj.0;
            if self.by_object.len() <= obj {
                self.by_object.resize_with(obj + 1, Vec::new);
            }
            races.extend(
                self.by_object[obj]
                    .iter()
                    .filter(|(j, kind)| {
                        kind.conflicts_with(access.kind)
                            && self.task_of[*j] != p
                            && prev.is_none_or(|l| !self.hb.before(*j, l))
                    })
                    .map(|(j, _)| *j),
            );
        }
        for access in step_accesses(self.run, i) {
            self.by_object[access.obj.0].push((i, access.kind));
        }
        races.sort_unstable();
        races.dedup();
        races
    }

    /// Asks for a backtrack point that reverses the race of step `j` with step `i` of task `p`.
    /// When p was parked on i's operation and disabled at j (j released it), p itself cannot
    /// go first; if no other initial could, the two steps cannot be reordered at all.
    fn reverse(&mut self, j: usize, i: usize, p: usize, prev: Option<usize>) {
        let parked = prev.is_none_or(|l| l < j);
        let disabled = !self.stack[self.nodes[j]].enabled.iter().any(|t| t.0 == p);
        let mut initials = self.hb.initials(j, i);
        if parked && disabled {
            initials.retain(|t| *t != p);
            if initials.is_empty() {
                return;
            }
        } else if let Some(at) = initials.iter().position(|t| *t == p) {
            // Prefer the racing task itself, as classic DPOR would.
            initials[..=at].rotate_right(1);
        }
        self.requests
            .push((self.nodes[j], Request::AnyOf(initials)));
        self.at_context_switches(j, p);
    }

    /// Under a bound, also lets `task` go first at the context switches before step `j`, where
    /// that may cost no extra preemption (see the module docs).
    fn at_context_switches(&mut self, j: usize, task: usize) {
        if self.bounded {
            for switch in context_switches(self.task_of, j) {
                self.requests
                    .push((self.nodes[switch], Request::Task(task)));
            }
        }
    }

    /// Operations parked at the run's end (a blocked task, or one the run stopped before, at a
    /// violation) never ran, yet they race too: with an earlier conflicting step at which their
    /// task was already enabled, it could have gone first there.
    fn pending(&mut self, steps: usize) {
        let run = self.run;
        for &(p, obj) in &run.pending {
            let prev = self
                .last_of
                .get(p)
                .copied()
                .flatten()
                .or_else(|| spawned_before(run, p, steps));
            let Some(accesses) = self.by_object.get(obj.0) else {
                continue;
            };
            let racing: Vec<usize> = accesses
                .iter()
                .map(|&(j, _)| j)
                .filter(|&j| self.task_of[j] != p && !prev.is_some_and(|l| self.hb.before(j, l)))
                .filter(|&j| self.stack[self.nodes[j]].enabled.iter().any(|t| t.0 == p))
                .collect();
            for j in racing {
                self.requests.push((self.nodes[j], Request::Task(p)));
                self.at_context_switches(j, p);
            }
        }
    }

    /// A violation ends the run inside its last step: any task enabled there could have gone
    /// first and led elsewhere, so that step conflicts with every other task's next.
    fn violation(&mut self, steps: usize) {
        let (true, Some(last)) = (self.run.violation().is_some(), steps.checked_sub(1)) else {
            return;
        };
        let others: Vec<usize> = self.stack[self.nodes[last]]
            .enabled
            .iter()
            .map(|t| t.0)
            .filter(|t| *t != self.task_of[last])
            .collect();
        for t in others {
            self.requests.push((self.nodes[last], Request::Task(t)));
            self.at_context_switches(last, t);
        }
    }
}

impl Dfs {
    /// Adds backtrack points for the races in the run just finished (source sets). A race is a
    /// step j and a later step i of another task p that conflict and are not ordered by
    /// happens-before through p's earlier steps. To reverse it, some task must go first at j
    /// that starts the steps between j and i not happening after j, followed by i: one of
    /// those initials is enough.
    pub(super) fn analyse_races(&mut self, run: &RunResult) {
        let nodes: Vec<usize> = (0..self.stack.len())
            .filter(|&i| self.stack[i].kind == Kind::Task)
            .collect();
        let steps = nodes.len().min(run.accesses.len());
        let task_of: Vec<usize> = nodes.iter().map(|&n| self.stack[n].chosen).collect();
        let tasks = task_of.iter().max().map_or(0, |m| m + 1);
        let mut scan = RaceScan {
            run,
            stack: &self.stack,
            nodes: &nodes,
            task_of: &task_of,
            hb: HappensBefore::of(run, &task_of, tasks, steps),
            bounded: self.preemption_bound.is_some(),
            last_of: vec![None; tasks],
            by_object: Vec::new(),
            requests: Vec::new(),
        };
        for i in 0..steps {
            scan.step(i);
        }
        scan.pending(steps);
        scan.violation(steps);
        for (at, request) in scan.requests {
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
}

/// Step `i`'s accesses of objects (a clock jump's `ObjId::EVERYTHING` left out: partial-order
/// reduction is not offered on a run that sets timers, see `Explorer::adapt_to`).
fn step_accesses(run: &RunResult, i: usize) -> impl Iterator<Item = &crate::vocab::Access> {
    run.accesses
        .step(i)
        .iter()
        .filter(|a| a.obj != crate::vocab::ObjId::EVERYTHING)
}
