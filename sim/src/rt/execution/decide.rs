//! The decision at each scheduling point: which tasks can run (time moving on while none
//! can, and the interventions the run may make), which of them the strategy picks (fairly),
//! and the step that hands the baton to it, recorded.

use super::{End, Execution};
use crate::rt::op::{Describe, ObjState, Op};
use crate::rt::task::{Task, TaskState};
use crate::strategy::{Fingerprint, PickView, Stop};
use crate::trace::TraceLine;
use crate::vocab::TaskId;

impl Execution {
    /// Notes the wakers called since the last decision: a blocked task whose flag is set can
    /// go on. The wake is the last step's doing (a write of the task's wake-up), or time's.
    fn collect_wakes(&mut self) {
        for i in 0..self.tasks.len() {
            let task = &self.tasks[i];
            let (Some(Op::Blocked(obj)), Some(flag)) = (task.state.parked_on(), &task.wake_flag)
            else {
                continue;
            };
            if flag.is_set() && matches!(self.objects[obj.0].state, ObjState::Wake { woken: false })
            {
                *self.state_mut(obj) = ObjState::Wake { woken: true };
            }
        }
    }

    #[inline]
    fn enabled(&self, task: &Task) -> bool {
        match task.state {
            TaskState::Parked(op) => op.object().is_none_or(|obj| self.objects[obj.0].allows(op)),
            _ => false,
        }
    }

    /// Grants the baton to the task the strategy picks, or ends the run when nobody can run.
    pub(crate) fn decide(&mut self) {
        if self.end.is_some() {
            return;
        }
        let prev = self.current.take();
        let mut enabled = std::mem::take(&mut self.enabled);
        self.find_enabled(&mut enabled);
        // A crash task is never the one that goes on by default: once it has crashed a node,
        // moving off it is no preemption and staying on it would be another crash.
        // The same for the clock task.
        let prev = prev.filter(|p| {
            !self.tasks[p.0]
                .state
                .parked_on()
                .is_some_and(Op::is_intervention)
        });
        if let Some(pick) = self.pick(prev, &mut enabled) {
            self.grant(prev, pick, &enabled);
        }
        self.enabled = enabled;
    }

    /// Fills `enabled` with the tasks that can run now, moving time on while none can; then,
    /// when some can, the interventions the run may still make (crashes, faults, clock jumps),
    /// after them.
    fn find_enabled(&mut self, enabled: &mut Vec<TaskId>) {
        loop {
            if self.blocked_tasks > 0 {
                self.collect_wakes();
            }
            enabled.clear();
            for (i, task) in self.tasks.iter().enumerate() {
                if self.enabled(task) {
                    enabled.push(TaskId(i));
                }
            }
            if !enabled.is_empty() || !self.advance_time() {
                break;
            }
        }
        if self.nodes.may_crash() && !enabled.is_empty() {
            self.enable_crashes(enabled);
        }
        if self.faults.left() > 0 && !enabled.is_empty() {
            self.enable_faults(enabled);
        }
        if self.clock.may_jump() && !enabled.is_empty() {
            self.enable_clock_jump(enabled);
        }
    }

    /// The task the strategy picks among `enabled` (narrowed to the fair ones); `None` when the
    /// run ends here instead: nobody can run, the step bound cuts it, or the strategy stops it.
    fn pick(&mut self, prev: Option<TaskId>, enabled: &mut Vec<TaskId>) -> Option<TaskId> {
        if enabled.is_empty() {
            self.end_blocked();
            return None;
        }
        if let Some((invariant, message)) = self.bound.cut(self.steps) {
            self.violate(invariant, message);
            return None;
        }
        if self.fairness.any_waiting() {
            self.fair(enabled);
        }
        match self.ask_strategy(prev, enabled) {
            Ok(t) => {
                debug_assert!(
                    enabled.contains(&t),
                    "strategy picked task {t:?}, which is not enabled"
                );
                Some(t)
            }
            Err(stop) => {
                self.stop(stop);
                None
            }
        }
    }

    /// What the strategy sees at this decision (`PickView`), and its pick.
    fn ask_strategy(&mut self, prev: Option<TaskId>, enabled: &[TaskId]) -> Result<TaskId, Stop> {
        let tasks = &self.tasks;
        let names = |t: TaskId| &*tasks[t.0].name;
        let pending = |t: TaskId| tasks.get(t.0)?.state.parked_on()?.object();
        let prev_accesses = self.accesses.as_ref().map_or(&[][..], |a| a.last());
        let (objects, recorder, clock, symmetry) =
            (&self.objects, &self.recorder, &self.clock, &self.symmetry);
        let fingerprint = self.values.as_ref().map(|v| {
            // Virtual time and the timers pending are part of the state (neither names a task).
            let time = clock.fingerprint();
            move |orbit| {
                let events = |k| recorder.task_events(k);
                let mut f = v.fingerprint(objects, tasks, &events, symmetry, orbit);
                f.state = crate::digest::mix(f.state, time);
                f.orbit = crate::digest::mix(f.orbit, time);
                f
            }
        });
        let yielded = self.fairness.ever_yielded();
        let fairness = || match yielded {
            true => fairness_digest(tasks),
            false => 0,
        };
        let view = PickView {
            step: self.steps,
            enabled,
            current: prev,
            prev_accesses,
            state_of: fingerprint
                .as_ref()
                .map(|f| f as &dyn Fn(bool) -> Fingerprint),
            fairness: &fairness,
            names: &names,
            pending: &pending,
        };
        self.strategy.pick_task(&view)
    }

    /// Hands the baton to `pick`: its step is recorded (decision, preemption, digest, trace),
    /// its own bookkeeping updated, its `choose` drawn, and it is handed the baton (`hand_to`).
    fn grant(&mut self, prev: Option<TaskId>, pick: TaskId, enabled: &[TaskId]) {
        // Moving off a task that yielded is what it asked for, not a preemption.
        let preempted = prev.is_some_and(|p| {
            p != pick
                && enabled.contains(&p)
                && self.tasks[p.0].state != TaskState::Parked(Op::YieldNow)
        });
        let op = std::mem::replace(&mut self.tasks[pick.0].state, TaskState::Running)
            .parked_on()
            .expect("an enabled task is parked");
        // A crash is the strategy's intervention, never what a task asked for: it counts as a
        // preemption, so bounds limit crashes too and the shrinker drops the unneeded ones.
        // So is a clock jump: time running ahead of a task that could still move.
        if op.is_intervention() {
            self.count_intervention(op);
        }
        let preempted = preempted || op.is_intervention();
        if preempted {
            self.recorder.preempted(self.steps);
        }
        self.recorder.picked(pick);
        if let Some(steps) = &mut self.accesses {
            steps.begin_step();
        }
        self.leave_park(pick, op);
        self.record_step(pick, op, preempted);
        if let Op::Choose(n) = op {
            if !self.draw_choice(pick, n) {
                return;
            }
        }
        self.steps += 1;
        self.current = Some(pick);
        self.tasks[pick.0].state = TaskState::Granted;
        // A task that blocked on a waker has returned from its slice: resume it even when it
        // is the one that just ran (a task at a scheduling point picked again goes on at once).
        if Some(pick) != prev || matches!(op, Op::Blocked(_)) {
            self.hand_to(pick);
        }
    }

    /// `pick` leaves what it was parked on: a fair yield ends, a wake is consumed; its grant's
    /// step is noted for fairness and its passing the point for the state by value.
    fn leave_park(&mut self, pick: TaskId, op: Op) {
        if self.fairness.any_waiting() {
            self.fair_grant(pick, op);
        }
        if let Op::Blocked(obj) = op {
            self.tasks[pick.0].waits_on.clear();
            self.blocked_tasks -= 1;
            // The wake is consumed: the task's future is polled again.
            *self.state_mut(obj) = ObjState::Wake { woken: false };
            if let Some(flag) = &self.tasks[pick.0].wake_flag {
                flag.take();
            }
        }
        self.tasks[pick.0].last_granted = Some(self.steps);
        if let Some(values) = &mut self.values {
            // The task moves past one more scheduling point (what it learns there, the
            // primitive reports).
            values.step(pick.0, op.code());
        }
    }

    /// The step into the digest and, when tracing, the trace (in the words of the primitive
    /// that parked the task, when it said).
    fn record_step(&mut self, pick: TaskId, op: Op, preempted: bool) {
        self.recorder.step(pick, op);
        let label = self.tasks[pick.0].label.take();
        if !self.recorder.keeps_trace() {
            return;
        }
        let op_text = match (label, op.object()) {
            (Some(label), Some(o)) => label.describe(&self.objects[o.0].name),
            _ => Describe {
                op,
                objects: &self.objects,
            }
            .to_string(),
        };
        let line = TraceLine::Step {
            step: self.steps,
            task: self.tasks[pick.0].name.to_string(),
            op: op_text,
            object: op.object().map(|o| self.objects[o.0].name.to_string()),
            effect: None,
            preempted,
        };
        self.recorder.line(|| line);
    }

    /// The strategy's value for `pick`'s `choose(n)`; false if it stopped the run instead.
    fn draw_choice(&mut self, pick: TaskId, n: usize) -> bool {
        match self.strategy.pick_value(self.steps, n) {
            Ok(v) => {
                self.tasks[pick.0].choice = v;
                if let Some(values) = &mut self.values {
                    values.chose(pick.0, v);
                }
                self.recorder.chose(v);
                self.note_effect(|| format!("{v}"));
                true
            }
            Err(stop) => {
                self.stop(stop);
                false
            }
        }
    }

    /// Counts an intervention by its kind: a fault by its site's first word ("reset conn#1 ..").
    fn count_intervention(&mut self, op: Op) {
        let kind = match op {
            Op::Crash(_) => "crash".to_string(),
            Op::ClockJump(_) => "clock jump".to_string(),
            Op::Fault(o) => {
                let name = &self.objects[o.0].name;
                name.split(' ').next().unwrap_or(name).to_string()
            }
            _ => return,
        };
        self.recorder.intervention(self.steps, kind);
    }

    /// Ends the run where the strategy stopped it.
    pub(super) fn stop(&mut self, stop: Stop) {
        match stop {
            Stop::Diverged(d) => self.finish(End::Divergence(d)),
            Stop::Pruned => self.finish(End::Pruned),
            Stop::Livelock(message) => self.violate("livelock", message),
            Stop::HiddenState(message) => self.violate(crate::strategy::HIDDEN_STATE, message),
        }
    }
}

/// A digest of who may run next besides what the tasks and objects are: per task, whom it
/// still waits for in a fair yield, whether its pending yield may go on at once (tokio's), and
/// whether its last yield did (so its next one may not).
fn fairness_digest(tasks: &[crate::rt::task::Task]) -> u64 {
    use crate::digest::mix;
    tasks.iter().enumerate().fold(0u64, |sum, (i, t)| {
        let waits = t.fair_wait.as_ref().map_or(0, |w| w.digest(tasks));
        let flags = u64::from(t.yield_may_continue) | u64::from(t.continued_yield) << 1;
        match (waits, flags) {
            (0, 0) => sum,
            _ => sum.wrapping_add(mix(mix(i as u64, waits), flags)),
        }
    })
}
