//! The value state of a run, for stateful search: every engine object's current value and each
//! task's local state as far as the engine can know it.
//!
//! A task is deterministic given what it observes, so its local state is a function of the
//! scheduling points it has passed and what it learned at each (a value loaded, a message
//! received, a lock's contents, a `choose` value; the primitives report these, in order), since
//! it started or since it last declared its locals (`sim::checkpoint`: a loop head whose whole
//! local state the model names). On a model that
//! keeps all shared state in engine objects (`Model::state_visible`), two schedules reaching the
//! same object values, task states and histories have the same futures. Coarser than the trace
//! of `strategy::visited`: it also merges schedules that read or write the same values in another
//! order, and a polling loop's iterations that change nothing.

use super::op::Object;
use super::task::Task;
use crate::digest::mix;

#[derive(Default)]
pub(crate) struct ValueState {
    /// Per object, a digest of its value (its contents; a history's event sequence).
    values: Vec<u64>,
    /// Per task, a digest of its local state.
    tasks: Vec<u64>,
}

fn slot(v: &mut Vec<u64>, i: usize) -> &mut u64 {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

impl ValueState {
    /// The object's value is now the one with this digest.
    pub fn set_value(&mut self, obj: usize, digest: u64) {
        *slot(&mut self.values, obj) = digest;
    }

    /// Extends the object's value by one element (an event appended to a history).
    pub fn append_value(&mut self, obj: usize, digest: u64) {
        let v = slot(&mut self.values, obj);
        *v = mix(*v, digest);
    }

    /// `task` learns something with this digest.
    pub fn observe(&mut self, task: usize, digest: u64) {
        let t = slot(&mut self.tasks, task);
        *t = mix(*t, digest);
    }

    /// `task` may read all of `obj`'s value.
    pub fn observe_value(&mut self, task: usize, obj: usize) {
        let value = mix(obj as u64, self.values.get(obj).copied().unwrap_or(0));
        self.observe(task, value);
    }

    /// `child` is spawned by `parent` (or by the setup, `None`): it starts knowing everything
    /// its parent knew, since its future may have captured any of it.
    pub fn spawn(&mut self, child: usize, parent: Option<usize>) {
        let inherited = parent.map_or(0, |p| self.tasks.get(p).copied().unwrap_or(0));
        *slot(&mut self.tasks, child) = mix(inherited, child as u64 | 1 << 61);
    }

    /// `task` passes a scheduling point with an operation of this kind.
    pub fn step(&mut self, task: usize, op: u64) {
        let t = slot(&mut self.tasks, task);
        *t = mix(*t, op | 1 << 62);
    }

    /// `task`'s `choose` drew `value`.
    pub fn chose(&mut self, task: usize, value: usize) {
        let t = slot(&mut self.tasks, task);
        *t = mix(*t, value as u64 | 1 << 63);
    }

    /// `task` declares that its whole local state is the one with this digest.
    pub fn checkpoint(&mut self, task: usize, locals: u64) {
        *slot(&mut self.tasks, task) = mix(locals, u64::MAX);
    }

    /// The fingerprint of the run's state: object values and scheduling states, the states of
    /// the tasks still running, and each task's events (`task_events`, slot 0 the setup's).
    pub fn fingerprint(&self, objects: &[Object], tasks: &[Task], task_events: &[u64]) -> u64 {
        let mut sum = 0u64;
        for (i, o) in objects.iter().enumerate() {
            let value = self.values.get(i).copied().unwrap_or(0);
            sum = sum.wrapping_add(mix(mix(i as u64, value), o.state.digest()));
        }
        for (i, t) in tasks.iter().enumerate() {
            // A finished task has no future: what it observed no longer matters (its events
            // still do).
            let local = match t.state.is_finished() {
                true => u64::MAX,
                false => self.tasks.get(i).copied().unwrap_or(0),
            };
            let events = task_events.get(i + 1).copied().unwrap_or(0);
            // Whom a task in a fair yield still waits for decides who may run next.
            let waits = t.fair_wait.as_ref().map_or(0, |w| w.digest(tasks));
            let task = mix(mix(mix(i as u64 | 1 << 62, local), events), waits);
            sum = sum.wrapping_add(task);
        }
        mix(sum, task_events.first().copied().unwrap_or(0))
    }
}
