//! Visited-state caching for DFS: the state a run has reached, fingerprinted by its Mazurkiewicz
//! trace, and the states whose every continuation has been (or is being) explored.
//!
//! On a model whose dependencies the engine sees (`Model::reduction_safe`), two schedules that
//! order every pair of conflicting accesses the same way reach the same state: each task has taken
//! the same steps and read the same values. So the state is identified by, per object, the order
//! of its conflicting accesses (a write, or a block of reads, or a block of commuting updates,
//! whose order within the block does not matter), plus each task's step count and the values its
//! `choose`s drew. DFS explores every continuation of a state the first time it reaches it; a
//! later run reaching the same state (with no more preemptions left, under a bound) repeats one
//! of them and stops. Unlike sleep sets and DPOR, this also merges schedules that reach one state
//! through different traces' prefixes joining again, such as a server polling in a loop.
//!
//! On a model that also declares its state visible (`Model::state_visible`), the executor
//! fingerprints the state by value instead (`rt::state`), which merges far more: schedules that
//! write the same values in another order, and a loop's iterations that change nothing. Without
//! a bound, sleep sets prune alongside (Godefroid's state caching with sleep sets): a state
//! counts as covered only when it was explored with no more tasks asleep.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::digest::mix;
use crate::vocab::{Access, AccessKind, ObjId};

/// One object's access history, canonical up to the order within blocks of commuting accesses.
#[derive(Clone, Copy, Default)]
struct ObjectHistory {
    /// The closed blocks, in order.
    chain: u64,
    /// The open block: its kind, and the sum of its accesses' hashes (order-free).
    open: Option<(AccessKind, u64)>,
}

impl ObjectHistory {
    fn digest(&self, obj: usize) -> u64 {
        let open = self.open.map_or(0, |(kind, sum)| mix(kind as u64 + 1, sum));
        mix(mix(obj as u64, self.chain), open)
    }

    fn push(&mut self, kind: AccessKind, event: u64) {
        match (&mut self.open, kind) {
            (Some((open, sum)), k) if *open == k && k != AccessKind::Write => {
                *sum = sum.wrapping_add(event);
            }
            (open, k) => {
                if let Some((kind, sum)) = open.take() {
                    self.chain = mix(self.chain, mix(kind as u64 + 1, sum));
                }
                *open = Some((k, event));
            }
        }
    }
}

/// The fingerprint of the state the current run has reached, kept up to date step by step.
#[derive(Default)]
pub struct TraceState {
    objects: Vec<ObjectHistory>,
    /// Per task: its steps so far and the values it drew, hashed in program order.
    tasks: Vec<(u32, u64)>,
    /// The sum of every object's and task's digest.
    sum: u64,
}

impl TraceState {
    /// Forgets the state, for the next run.
    pub fn reset(&mut self) {
        self.objects.clear();
        self.tasks.clear();
        self.sum = 0;
    }

    fn task_digest(task: usize, (steps, local): (u32, u64)) -> u64 {
        mix(mix(task as u64 | 1 << 63, u64::from(steps)), local)
    }

    fn task(&mut self, task: usize) -> &mut (u32, u64) {
        if self.tasks.len() <= task {
            self.tasks.resize(task + 1, (0, 0));
        }
        &mut self.tasks[task]
    }

    /// `task` took a step that made these accesses.
    pub fn step(&mut self, task: usize, accesses: &[Access]) {
        let before = Self::task_digest(task, *self.task(task));
        let entry = self.task(task);
        entry.0 += 1;
        let (steps, after) = (entry.0, Self::task_digest(task, *entry));
        self.sum = self.sum.wrapping_sub(before).wrapping_add(after);
        let event = mix(task as u64, u64::from(steps));
        for a in accesses.iter().filter(|a| a.obj != ObjId::EVERYTHING) {
            let obj = a.obj.0;
            if self.objects.len() <= obj {
                self.objects.resize(obj + 1, ObjectHistory::default());
            }
            let history = &mut self.objects[obj];
            let before = history.digest(obj);
            history.push(a.kind, event);
            self.sum = self
                .sum
                .wrapping_sub(before)
                .wrapping_add(history.digest(obj));
        }
    }

    /// `task`'s `choose` drew `value`.
    pub fn chose(&mut self, task: usize, value: usize) {
        let before = Self::task_digest(task, *self.task(task));
        let entry = self.task(task);
        entry.1 = mix(entry.1, value as u64 + 1);
        let after = Self::task_digest(task, *entry);
        self.sum = self.sum.wrapping_sub(before).wrapping_add(after);
    }

    /// The state's fingerprint.
    pub fn fingerprint(&self) -> u64 {
        self.sum
    }
}

/// A set of tasks, by number: a bit mask up to task 63, a longer one past it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskSet {
    /// Tasks 0 to 63, as a bit mask.
    Small(u64),
    /// Any tasks, as bit-mask words (task t is bit t mod 64 of word t / 64).
    Large(Box<[u64]>),
}

impl Default for TaskSet {
    fn default() -> Self {
        TaskSet::Small(0)
    }
}

impl TaskSet {
    /// The set of `tasks`.
    pub fn of(tasks: impl IntoIterator<Item = usize>) -> TaskSet {
        let mut words: Vec<u64> = vec![0];
        for t in tasks {
            if words.len() <= t / 64 {
                words.resize(t / 64 + 1, 0);
            }
            words[t / 64] |= 1 << (t % 64);
        }
        TaskSet::from_words(words)
    }

    fn from_words(mut words: Vec<u64>) -> TaskSet {
        while words.len() > 1 && words.last() == Some(&0) {
            words.pop();
        }
        match words.as_slice() {
            [w] => TaskSet::Small(*w),
            _ => TaskSet::Large(words.into_boxed_slice()),
        }
    }

    fn words(&self) -> &[u64] {
        match self {
            TaskSet::Small(w) => std::slice::from_ref(w),
            TaskSet::Large(ws) => ws,
        }
    }

    /// Whether `task` is in the set.
    pub fn contains(&self, task: usize) -> bool {
        self.words()
            .get(task / 64)
            .is_some_and(|w| w >> (task % 64) & 1 == 1)
    }

    /// Whether the set has no task.
    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|w| *w == 0)
    }

    /// The tasks in `self` and not in `other`.
    pub fn minus(&self, other: &TaskSet) -> TaskSet {
        let (a, b) = (self.words(), other.words());
        let words = a
            .iter()
            .enumerate()
            .map(|(i, w)| w & !b.get(i).copied().unwrap_or(0))
            .collect();
        TaskSet::from_words(words)
    }

    /// The tasks in both.
    pub fn and(&self, other: &TaskSet) -> TaskSet {
        let (a, b) = (self.words(), other.words());
        let words = a
            .iter()
            .enumerate()
            .map(|(i, w)| w & b.get(i).copied().unwrap_or(0))
            .collect();
        TaskSet::from_words(words)
    }
}

/// States whose continuations DFS has explored, with the fewest preemptions spent reaching each
/// (a state reached with more spent has fewer continuations within the bound). Parallel jobs
/// share one: a state one job has reached, another need not explore again, since the first
/// explores all its continuations (or leaves each to a job that reached it first, and so on
/// down to final states). By value, a schedule can come back to a state it passed (a loop that
/// changed nothing); it stops there, and the first visit, still on its path, explores the
/// rest: every reachable state is still reached, but a schedule that could loop forever is cut
/// rather than run into the step bound.
pub struct Visited {
    /// State -> (preemptions spent, tasks asleep) of its covering visit.
    shards: Vec<Mutex<HashMap<u64, (usize, TaskSet)>>>,
}

/// What a run reaching a state has left to explore from it.
#[derive(Debug, PartialEq, Eq)]
pub enum Visit {
    /// The first visit: everything.
    New,
    /// Nothing: a visit with no more preemptions spent and no more tasks asleep covers it.
    Covered,
    /// Only these tasks: asleep at the earlier visit, awake now.
    Partly(TaskSet),
}

impl Default for Visited {
    fn default() -> Self {
        Visited {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

/// Lock shards, so that jobs rarely wait on each other.
const SHARDS: usize = 64;

impl Visited {
    /// Marks the state `key` reached with `preemptions` spent and the tasks in `asleep` asleep
    /// (sleep sets: their continuations are explored elsewhere), and says what is left to
    /// explore from it. An earlier visit explored every task it did not have asleep (within the
    /// bound); after this one, only the tasks asleep at both stay unexplored (Godefroid 1996).
    pub fn visit(&self, key: u64, preemptions: usize, asleep: TaskSet) -> Visit {
        let shard = &self.shards[(key >> 58) as usize % SHARDS];
        let mut states = shard.lock().expect("no job panics holding the lock");
        match states.get_mut(&key) {
            None => {
                states.insert(key, (preemptions, asleep));
                Visit::New
            }
            Some((spent, _)) if *spent > preemptions => {
                // Fewer preemptions left then: this visit has continuations that one lacked.
                states.insert(key, (preemptions, asleep));
                Visit::New
            }
            Some((_, before)) => {
                let todo = before.minus(&asleep);
                if todo.is_empty() {
                    return Visit::Covered;
                }
                *before = before.and(&asleep);
                Visit::Partly(todo)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_task_past_63_is_remembered() {
        let visited = Visited::default();
        // Task 70 asleep at the first visit: its continuations are not explored from there.
        assert_eq!(visited.visit(7, 0, TaskSet::of([70])), Visit::New);
        // A later visit with nobody asleep must explore task 70, not count as covered.
        assert_eq!(
            visited.visit(7, 0, TaskSet::default()),
            Visit::Partly(TaskSet::of([70]))
        );
        // Now every task has been explored from the state.
        assert_eq!(visited.visit(7, 0, TaskSet::default()), Visit::Covered);
    }

    #[test]
    fn task_sets_of_any_size() {
        let a = TaskSet::of([1, 64, 200]);
        assert!(a.contains(200) && a.contains(64) && !a.contains(65));
        assert_eq!(a.minus(&TaskSet::of([64, 200])), TaskSet::of([1]));
        assert_eq!(a.and(&TaskSet::of([200, 3])), TaskSet::of([200]));
        assert!(TaskSet::of([300]).minus(&TaskSet::of([300])).is_empty());
    }
}
