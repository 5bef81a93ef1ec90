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
use super::symmetry::Symmetry;
use super::task::Task;
use crate::digest::mix;
use crate::strategy::Fingerprint;

/// Per object and per task, a digest in each of the symmetry's lanes (`rt::symmetry`: lane `k`
/// is the state with the members' roles permuted by the `k`-th permutation; one lane when the
/// model declares no members).
pub(crate) struct ValueState {
    lanes: usize,
    /// Object `i`'s value in lane `k`: `values[i * lanes + k]`.
    values: Vec<u64>,
    /// Task `i`'s local state in lane `k`: `tasks[i * lanes + k]`.
    tasks: Vec<u64>,
}

fn lanes_of(v: &mut Vec<u64>, i: usize, lanes: usize) -> &mut [u64] {
    if v.len() < (i + 1) * lanes {
        v.resize((i + 1) * lanes, 0);
    }
    &mut v[i * lanes..(i + 1) * lanes]
}

fn lane(v: &[u64], i: usize, lanes: usize, k: usize) -> u64 {
    v.get(i * lanes + k).copied().unwrap_or(0)
}

impl ValueState {
    /// The value state of a run with this symmetry.
    pub fn new(symmetry: &Symmetry) -> Self {
        ValueState {
            lanes: symmetry.lanes(),
            values: Vec::new(),
            tasks: Vec::new(),
        }
    }

    /// The object's value is now the one with this digest (computed in each lane).
    pub fn set_value(&mut self, obj: usize, sym: &Symmetry, digest: impl Fn() -> u64) {
        let slots = lanes_of(&mut self.values, obj, self.lanes);
        sym.each_lane(digest, |k, d| slots[k] = d);
    }

    /// Extends the object's value by one element (an event appended to a history).
    pub fn append_value(&mut self, obj: usize, sym: &Symmetry, digest: impl Fn() -> u64) {
        let slots = lanes_of(&mut self.values, obj, self.lanes);
        sym.each_lane(digest, |k, d| slots[k] = mix(slots[k], d));
    }

    /// `task` learns something with this digest.
    pub fn observe(&mut self, task: usize, sym: &Symmetry, digest: impl Fn() -> u64) {
        let slots = lanes_of(&mut self.tasks, task, self.lanes);
        sym.each_lane(digest, |k, d| slots[k] = mix(slots[k], d));
    }

    /// `task` may read all of `obj`'s value.
    pub fn observe_value(&mut self, task: usize, obj: usize) {
        let lanes = self.lanes;
        for (k, t) in lanes_of(&mut self.tasks, task, lanes)
            .iter_mut()
            .enumerate()
        {
            *t = mix(*t, mix(obj as u64, lane(&self.values, obj, lanes, k)));
        }
    }

    /// `child` is spawned by `parent` (or by the setup, `None`): it starts knowing everything
    /// its parent knew, since its future may have captured any of it.
    pub fn spawn(&mut self, child: usize, parent: Option<usize>, sym: &Symmetry) {
        let lanes = self.lanes;
        for k in 0..lanes {
            let inherited = parent.map_or(0, |p| lane(&self.tasks, p, lanes, k));
            let who = sym.image(k, child) as u64;
            lanes_of(&mut self.tasks, child, lanes)[k] = mix(inherited, who | 1 << 61);
        }
    }

    fn mix_all(&mut self, task: usize, word: u64) {
        for t in lanes_of(&mut self.tasks, task, self.lanes) {
            *t = mix(*t, word);
        }
    }

    /// `task` passes a scheduling point with an operation of this kind.
    pub fn step(&mut self, task: usize, op: u64) {
        self.mix_all(task, op | 1 << 62);
    }

    /// `task`'s `choose` drew `value`.
    pub fn chose(&mut self, task: usize, value: usize) {
        self.mix_all(task, value as u64 | 1 << 63);
    }

    /// `task` declares that its whole local state is the one with this digest.
    pub fn checkpoint(&mut self, task: usize, sym: &Symmetry, locals: impl Fn() -> u64) {
        let slots = lanes_of(&mut self.tasks, task, self.lanes);
        sym.each_lane(locals, |k, d| slots[k] = mix(d, u64::MAX));
    }

    /// The fingerprints of the run's state: object values and scheduling states, the states of
    /// the tasks still running, and each task's events (`task_events(k)`: lane `k`'s, slot 0
    /// the setup's); as it is and, with `orbit`, where the symmetry holds, the smallest of its
    /// images (without, `orbit` is `state`).
    pub fn fingerprint<'e>(
        &self,
        objects: &[Object],
        tasks: &[Task],
        task_events: &dyn Fn(usize) -> &'e [u64],
        sym: &Symmetry,
        orbit: bool,
    ) -> Fingerprint {
        // Whom a fair yield waits for is a set of task numbers: no renaming.
        let lanes = match orbit && !tasks.iter().any(|t| t.fair_wait.is_some()) {
            true => sym.fingerprint_lanes(),
            false => 1,
        };
        let state = self.lane_fingerprint(0, objects, tasks, task_events(0), sym);
        let mut best = (state, 0);
        for k in 1..lanes {
            let f = self.lane_fingerprint(k, objects, tasks, task_events(k), sym);
            if f < best.0 {
                best = (f, k);
            }
        }
        let rename = match best.1 {
            0 => Vec::new(),
            k => (0..tasks.len()).map(|t| sym.image(k, t)).collect(),
        };
        Fingerprint {
            state,
            orbit: best.0,
            rename,
        }
    }

    fn lane_fingerprint(
        &self,
        k: usize,
        objects: &[Object],
        tasks: &[Task],
        task_events: &[u64],
        sym: &Symmetry,
    ) -> u64 {
        let lanes = self.lanes;
        let mut sum = 0u64;
        for (i, o) in objects.iter().enumerate() {
            let value = lane(&self.values, i, lanes, k);
            let sched = o.state.digest(|t| sym.image(k, t));
            sum = sum.wrapping_add(mix(mix(i as u64, value), sched));
        }
        for (i, t) in tasks.iter().enumerate() {
            // A finished task has no future: what it observed no longer matters (its events
            // still do).
            let local = match t.state.is_finished() {
                true => u64::MAX,
                false => lane(&self.tasks, i, lanes, k),
            };
            let events = task_events.get(i + 1).copied().unwrap_or(0);
            // Whom a task in a fair yield still waits for decides who may run next.
            let waits = t.fair_wait.as_ref().map_or(0, |w| w.digest(tasks));
            let who = sym.image(k, i) as u64;
            let task = mix(mix(mix(who | 1 << 62, local), events), waits);
            sum = sum.wrapping_add(task);
        }
        mix(sum, task_events.first().copied().unwrap_or(0))
    }
}
