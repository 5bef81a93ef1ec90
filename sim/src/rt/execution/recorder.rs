//! What a run records of itself as it goes: the decisions (the schedule), the steps preempted
//! and the interventions among them, the digest of every step and event, each task's events,
//! and the trace when one is kept. Written only through these methods, read at the run's end.

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::sync::Arc;
use std::time::Duration;

use super::Execution;
use crate::digest::{self, Digest};
use crate::rt::op::Op;
use crate::rt::symmetry::Symmetry;
use crate::rt::task::Task;
use crate::trace::{Mark, Trace, TraceLine};
use crate::vocab::result::Recorded;
use crate::vocab::TaskId;

thread_local! {
    /// How many decisions the last run on this thread recorded: runs of one model are alike, so
    /// the next is sized the same (a capacity only: nothing a run does depends on it). A fixed
    /// guess too large for a short run cost it a large allocation, and the allocator's
    /// consolidation that comes with one, every run.
    static LAST_DECISIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(16) };
}

pub(crate) struct Recorder {
    decisions: Vec<Recorded>,
    /// What each value drawn within a step decided, by its index among the decisions.
    draw_labels: BTreeMap<usize, Arc<str>>,
    preempted_steps: Vec<usize>,
    /// The strategy's interventions so far, each its step and kind ("crash", "reset",
    /// "partition", "clock jump"): each also counts as a preemption.
    interventions: Vec<(usize, String)>,
    digest: Digest,
    /// Per lane of the symmetry (`rt::symmetry`), per task, a hash of the events it emitted, in
    /// order: equal for equivalent schedules (slot 0 is the setup's, task i's is slot i + 1).
    /// The identity's lane apart, so that a run without symmetry allocates no table of lanes.
    task_events: Vec<u64>,
    other_lanes: Vec<Vec<u64>>,
    trace: Option<Trace>,
}

impl Recorder {
    /// A recorder for a run, filling `decisions` and `task_events` (empty: the last run's
    /// lists, given back, or new ones).
    pub(crate) fn new(
        trace: bool,
        lanes: usize,
        decisions: Vec<Recorded>,
        task_events: Vec<u64>,
    ) -> Self {
        Recorder {
            // Sized as the last run's, so that recording a step seldom reallocates.
            decisions: match decisions.capacity() {
                0 => Vec::with_capacity(LAST_DECISIONS.with(std::cell::Cell::get)),
                _ => decisions,
            },
            draw_labels: BTreeMap::new(),
            preempted_steps: Vec::new(),
            interventions: Vec::new(),
            digest: Digest::default(),
            task_events: match task_events.capacity() {
                0 => Vec::with_capacity(8),
                _ => task_events,
            },
            other_lanes: (1..lanes).map(|_| Vec::with_capacity(8)).collect(),
            trace: trace.then(Trace::default),
        }
    }

    /// The strategy picked `task`.
    pub(crate) fn picked(&mut self, task: TaskId) {
        self.decisions.push(Recorded::task(task));
    }

    /// The step at `step` preempted the task that could have gone on.
    pub(crate) fn preempted(&mut self, step: usize) {
        self.preempted_steps.push(step);
    }

    pub(crate) fn intervention(&mut self, step: usize, kind: String) {
        self.interventions.push((step, kind));
    }

    /// Who moved and how (op codes fit a byte), and on what: two words a step.
    pub(crate) fn step(&mut self, task: TaskId, op: Op) {
        self.digest.write_u64((task.0 as u64) << 8 | op.code());
        self.digest
            .write_usize(op.object().map_or(usize::MAX, |o| o.0));
    }

    /// The strategy picked `value` for a `choose`.
    pub(crate) fn chose(&mut self, value: usize) {
        self.decisions.push(Recorded::choice(value));
        self.digest.write_usize(value);
    }

    /// The strategy drew `value` within a step, deciding `what`.
    pub(crate) fn drew(&mut self, value: usize, what: Arc<str>) {
        self.draw_labels.insert(self.decisions.len(), what);
        self.chose(value);
    }

    /// Time advanced to `deadline` at `step` and `fired` timers fired.
    pub(crate) fn time_advanced(&mut self, step: usize, deadline: Duration, fired: usize) {
        self.digest.write_u64(0x7157 ^ deadline.as_nanos() as u64);
        self.line(|| TraceLine::Event {
            step,
            task: "clock".to_string(),
            text: format!("time advances to {deadline:?}: {fired} timer(s) fire"),
        });
    }

    /// Hashes a model event of `task` (`None`: the setup) into the run's digest and the task's
    /// event sequence, in each of the symmetry's lanes (the run's digest takes the identity's).
    pub(crate) fn event(&mut self, task: Option<TaskId>, sym: &Symmetry, hash: impl Fn() -> u64) {
        let slot = task.map_or(0, |t| t.0 + 1);
        let (digest, identity, others) = (
            &mut self.digest,
            &mut self.task_events,
            &mut self.other_lanes,
        );
        sym.each_lane(hash, |k, hash| {
            if k == 0 {
                digest.write_u64(hash);
            }
            let events = match k {
                0 => &mut *identity,
                k => &mut others[k - 1],
            };
            if events.len() <= slot {
                events.resize(slot + 1, 0);
            }
            let mut h = Digest::default();
            h.write_u64(events[slot]);
            h.write_u64(hash);
            events[slot] = h.finish();
        });
    }

    /// Lane `k`'s event hashes, by slot.
    pub(crate) fn task_events(&self, k: usize) -> &[u64] {
        match k {
            0 => &self.task_events,
            k => &self.other_lanes[k - 1],
        }
    }

    /// A hash of every task's event sequence: schedules that differ only in the order of
    /// independent steps have the same end state. Tasks count by name, not by number, and
    /// without the suffix that tells namesakes apart (`handler#2`): two tasks spawning in
    /// either order only swap their children's numbers and suffixes. Where the model's
    /// symmetry holds, the smallest over its renamings: one end state per orbit.
    pub(crate) fn end_state(&self, tasks: &[Task], sym: &Symmetry) -> u64 {
        let lane = |k: usize| {
            let events = self.task_events(k);
            let setup = events.first().copied().unwrap_or(0);
            let tasks = (0..tasks.len()).map(|i| {
                let events = events.get(i + 1).copied().unwrap_or(0);
                digest::mix(tasks[sym.image(k, i)].base_hash, events)
            });
            let sum = tasks.fold(0u64, |sum, t| sum.wrapping_add(t));
            digest::mix(setup, sum)
        };
        (0..sym.fingerprint_lanes()).map(lane).min().unwrap_or(0)
    }

    pub(crate) fn digest(&self) -> u64 {
        self.digest.finish()
    }

    pub(crate) fn preemptions(&self) -> usize {
        self.preempted_steps.len()
    }

    pub(crate) fn keeps_trace(&self) -> bool {
        self.trace.is_some()
    }

    /// The trace, when one is kept: to add what only the execution can say.
    pub(crate) fn trace_mut(&mut self) -> Option<&mut Trace> {
        self.trace.as_mut()
    }

    /// Adds the line `line` makes, when tracing.
    pub(crate) fn line(&mut self, line: impl FnOnce() -> TraceLine) {
        if let Some(trace) = &mut self.trace {
            trace.lines.push(line());
        }
    }

    /// Attaches an effect ("acquired", "Full", "popped p1#1") to the last step, when tracing.
    pub(crate) fn note_effect(&mut self, effect: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            if let Some(TraceLine::Step { effect: slot, .. }) = trace.lines.last_mut() {
                *slot = Some(effect());
            }
        }
    }

    /// Rewrites the text of the run's end line, when tracing.
    pub(crate) fn retell_end(&mut self, text: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            if let Some(TraceLine::End { text: slot, .. }) = trace.lines.last_mut() {
                *slot = text();
            }
        }
    }

    /// The schedule's decisions and the labels of the values drawn, taken at the run's end.
    pub(crate) fn take_schedule(&mut self) -> (Vec<Recorded>, BTreeMap<usize, Arc<str>>) {
        LAST_DECISIONS.with(|n| n.set(self.decisions.len()));
        (
            std::mem::take(&mut self.decisions),
            std::mem::take(&mut self.draw_labels),
        )
    }

    /// The decision list and events table, for the next run (see `execution::spare`).
    pub(crate) fn take_lists(&mut self) -> (Vec<Recorded>, Vec<u64>) {
        (
            std::mem::take(&mut self.decisions),
            std::mem::take(&mut self.task_events),
        )
    }

    pub(crate) fn take_preempted_steps(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.preempted_steps)
    }

    pub(crate) fn take_interventions(&mut self) -> Vec<(usize, String)> {
        std::mem::take(&mut self.interventions)
    }

    pub(crate) fn take_trace(&mut self) -> Option<Trace> {
        self.trace.take()
    }
}

/// What the rest of the engine records through the execution, which knows the running task and
/// the step.
impl Execution {
    /// Hashes a model event into the run's digest and its task's event sequence.
    pub(crate) fn digest_event(&mut self, hash: impl Fn() -> u64) {
        self.recorder.event(self.current, &self.symmetry, hash);
    }

    /// A hash of every task's event sequence (see `Recorder::end_state`).
    pub(crate) fn end_state(&self) -> u64 {
        self.recorder.end_state(&self.tasks, &self.symmetry)
    }

    /// Attaches an effect ("acquired", "Full", "popped p1#1") to the last step, when tracing.
    pub(crate) fn note_effect(&mut self, effect: impl FnOnce() -> String) {
        self.recorder.note_effect(effect);
    }

    pub(crate) fn trace_event(&mut self, text: impl FnOnce() -> String) {
        if !self.recorder.keeps_trace() {
            return;
        }
        let task = self.current_name().to_string();
        let step = self.steps;
        self.recorder.line(|| TraceLine::Event {
            step,
            task,
            text: text(),
        });
    }

    /// Records a model's mark (see `sim::mark`) when tracing and the run goes on: no digest,
    /// no access, no step. Whether it was recorded.
    pub(crate) fn trace_mark(&mut self, mark: Mark, name: impl FnOnce() -> String) -> bool {
        if !self.recorder.keeps_trace() || self.is_over() {
            return false;
        }
        let task = self.current_name().to_string();
        let step = self.steps;
        self.recorder.line(|| TraceLine::Mark {
            step,
            task,
            mark,
            name: name(),
        });
        true
    }

    /// The keys of the frames the violation being recorded concerns, when tracing.
    pub(crate) fn trace_about(&mut self, about: impl FnOnce() -> Vec<String>) {
        if let Some(trace) = self.recorder.trace_mut() {
            trace.about = about();
        }
    }
}
