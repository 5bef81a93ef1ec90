//! A run's virtual time: the clock, the timers pending, and the jumps the strategy may make
//! ahead of a task that can still run. Its own part of the execution so that time changes
//! only through these methods (see `sim::time`).

use std::collections::BTreeMap;
use std::task::Waker;
use std::time::Duration;

use super::Execution;
use crate::digest::mix;
use crate::rt::op::{ObjState, Op};
use crate::rt::task::TaskState;
use crate::vocab::{AccessKind, ObjId, TaskId};

/// A pending timer: its deadline, then the order it was set in.
pub(crate) type TimerKey = (Duration, u64);

/// Virtual time since the run began, and the timers pending by deadline then creation: time
/// moves only when no task can, to the next deadline, or by a clock jump.
#[derive(Default)]
pub(crate) struct Clock {
    now: Duration,
    timers: BTreeMap<TimerKey, Waker>,
    timer_seq: u64,
    /// How many more times virtual time may jump ahead of a task that can still run.
    jumps_left: usize,
    /// The task whose steps are clock jumps, once a timer exists (see `time::start_clock`).
    task: Option<TaskId>,
    /// The run paused its clock (`sim::time::pause`): no jumps while tasks can run.
    paused: bool,
    /// The object that stands for the time and the timers in the reduction's view (made at
    /// first use): a step that reads the time reads it, one that sets, cancels or fires a
    /// timer writes it.
    object: Option<ObjId>,
    /// The run set a timer.
    set_timers: bool,
}

impl Clock {
    pub(crate) fn now(&self) -> Duration {
        self.now
    }

    /// Registers a timer at `deadline` that wakes `waker`; returns its key.
    pub(crate) fn add_timer(&mut self, deadline: Duration, waker: Waker) -> TimerKey {
        self.timer_seq += 1;
        let key = (deadline, self.timer_seq);
        self.timers.insert(key, waker);
        key
    }

    /// Replaces the waker of a pending timer (a future polled from another context).
    pub(crate) fn update_timer(&mut self, key: TimerKey, waker: &Waker) {
        if let Some(w) = self.timers.get_mut(&key) {
            if !w.will_wake(waker) {
                *w = waker.clone();
            }
        }
    }

    /// Whether the timer `key` is still waiting to fire.
    pub(crate) fn timer_pending(&self, key: TimerKey) -> bool {
        self.timers.contains_key(&key)
    }

    pub(crate) fn cancel_timer(&mut self, key: TimerKey) {
        self.timers.remove(&key);
    }

    /// Time moves to the next deadline; the timers due then, to fire. `None` when no timer is
    /// pending.
    pub(crate) fn advance(&mut self) -> Option<(Duration, Vec<(TimerKey, Waker)>)> {
        let (&(deadline, _), _) = self.timers.first_key_value()?;
        self.now = deadline;
        let mut due = Vec::new();
        while self
            .timers
            .first_key_value()
            .is_some_and(|((d, _), _)| *d == deadline)
        {
            due.extend(self.timers.pop_first());
        }
        Some((deadline, due))
    }

    /// Virtual time and the timers pending, as part of the run's state by value.
    pub(crate) fn fingerprint(&self) -> u64 {
        mix(self.now.as_nanos() as u64, self.timers.len() as u64)
    }

    /// Lets the run jump its clock up to `jumps` times (`Model::clock_jumps`).
    pub(crate) fn allow_jumps(&mut self, jumps: usize) {
        self.jumps_left = jumps;
    }

    /// A jump taken (the clock task's step).
    pub(crate) fn spend_jump(&mut self) {
        self.jumps_left = self.jumps_left.saturating_sub(1);
    }

    /// Whether the clock task may take a step now: a jump left, the clock not paused, and a
    /// timer to jump to.
    pub(crate) fn may_jump(&self) -> bool {
        self.jumps_left > 0 && !self.paused && !self.timers.is_empty()
    }

    /// Whether the run may jump its clock and has no clock task yet.
    pub(crate) fn wants_task(&self) -> bool {
        self.jumps_left > 0 && self.task.is_none()
    }

    pub(crate) fn task(&self) -> Option<TaskId> {
        self.task
    }

    pub(crate) fn set_task(&mut self, task: TaskId) {
        self.task = Some(task);
    }

    /// Pauses the clock (`sim::time::pause`) or resumes it.
    pub(crate) fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }
}

impl Execution {
    /// The current step accesses the time and timers (see `Clock::object`).
    fn access_time(&mut self, kind: AccessKind) {
        let obj = match self.clock.object {
            Some(obj) => obj,
            None => {
                let obj = self.add_object("timers".into(), ObjState::Node);
                self.clock.object = Some(obj);
                obj
            }
        };
        self.access(obj, kind);
    }

    /// The run's virtual time, read by the current step.
    pub(crate) fn read_time(&mut self) -> Duration {
        self.access_time(AccessKind::Read);
        self.clock.now()
    }

    /// Registers a timer at `deadline` (virtual) that wakes `waker`; returns its key.
    pub(crate) fn add_timer(&mut self, deadline: std::time::Duration, waker: Waker) -> TimerKey {
        self.access_time(AccessKind::Write);
        self.clock.set_timers = true;
        self.clock.add_timer(deadline, waker)
    }

    /// Whether the timer `key` is still waiting to fire.
    pub(crate) fn timer_pending(&mut self, key: TimerKey) -> bool {
        self.access_time(AccessKind::Read);
        self.clock.timer_pending(key)
    }

    /// Cancels the timer `key` (its future dropped, or found elapsed).
    pub(crate) fn cancel_timer(&mut self, key: TimerKey) {
        self.access_time(AccessKind::Write);
        self.clock.cancel_timer(key);
    }

    /// Replaces the waker of the pending timer `key`.
    pub(crate) fn update_timer(&mut self, key: TimerKey, waker: &Waker) {
        self.access_time(AccessKind::Write);
        self.clock.update_timer(key, waker);
    }

    /// Pauses the clock (`sim::time::pause`) or resumes it: whether it may jump changes.
    pub(crate) fn pause_clock(&mut self, paused: bool) {
        self.access_time(AccessKind::Write);
        self.clock.set_paused(paused);
    }

    /// Whether the run set a timer: a search whose states are identified by value (whose
    /// fingerprint of the clock leaves out whom each timer wakes) then runs without reduction.
    pub(crate) fn set_timers(&self) -> bool {
        self.clock.set_timers
    }

    /// No task can move: time jumps to the next deadline and every timer due then fires (their
    /// tasks become able to move together, and the strategy picks who goes first). False when
    /// no timer is pending.
    pub(super) fn advance_time(&mut self) -> bool {
        let Some((deadline, due)) = self.clock.advance() else {
            return false;
        };
        // Between steps (no task can move), the step that left them so is charged with it.
        self.access_time(AccessKind::Write);
        self.recorder.time_advanced(self.steps, deadline, due.len());
        for (_, waker) in due {
            waker.wake();
        }
        true
    }

    /// The clock task's step: virtual time jumps to the next deadline and its timers fire,
    /// while other tasks could still have run first. Whether it may is a matter of every other
    /// task (one of them must be able to run), so the step depends on every other step: a
    /// sleep set never carries it, nor anything past it.
    pub(crate) fn jump_clock(&mut self) {
        // The timers' write is `advance_time`'s.
        self.access(ObjId::EVERYTHING, AccessKind::Write);
        self.clock.spend_jump();
        self.advance_time();
    }

    /// Whether a clock task should be started now: the run may jump its clock and has none.
    pub(crate) fn wants_clock(&self) -> bool {
        self.clock.wants_task() && !self.is_over()
    }

    /// Adds the clock task, after the tasks proper (a strategy's default pick is never a jump).
    pub(super) fn enable_clock_jump(&mut self, enabled: &mut Vec<TaskId>) {
        if let Some(clock) = self.clock.task() {
            if matches!(
                self.tasks[clock.0].state,
                TaskState::Parked(Op::ClockJump(_))
            ) {
                enabled.push(clock);
            }
        }
    }
}
