//! How a run ends when nobody can run: quiescence when every unfinished task waits idly (or
//! the main task is done), else a deadlock, said in the words of what each task waits on and
//! who holds it.

use std::fmt::Write as _;

use super::{End, Execution};
use crate::rt::op::{Describe, ObjState, Op};
use crate::rt::task::Task;
use crate::trace::Wait;

impl Execution {
    /// Nobody can run: quiescence if every unfinished task is idle, else a deadlock.
    pub(super) fn end_blocked(&mut self) {
        let parked = |t: &Task| {
            t.state
                .parked_on()
                .expect("an unfinished task that is not running is parked")
        };
        let unfinished = || self.tasks.iter().filter(|t| !t.state.is_finished());
        let main_done = self
            .main
            .is_some_and(|m| self.tasks[m.0].state.is_finished());
        if main_done || unfinished().all(|t| t.daemon || parked(t).is_idle_wait()) {
            self.finish(End::Quiescent);
            return;
        }
        // A deadlock: say who waits on what (only now, not at every quiescent end).
        let mut stuck = String::new();
        let mut idle = String::new();
        // Daemons (deliveries, fault sites) wait as a matter of course: not worth a word.
        for t in unfinished().filter(|t| !t.daemon) {
            let op = parked(t);
            let line = if t.daemon || op.is_idle_wait() {
                &mut idle
            } else {
                &mut stuck
            };
            if !line.is_empty() {
                line.push_str("; ");
            }
            match self.said_wait(t, false) {
                Some(wait) => line.push_str(&wait.describe()),
                None => {
                    let _ = write!(
                        line,
                        "{} waits on {}",
                        t.name,
                        Describe {
                            op,
                            objects: &self.objects
                        }
                    );
                }
            }
        }
        if !idle.is_empty() {
            let _ = write!(stuck, " (idle: {idle})");
        }
        if self.recorder.keeps_trace() {
            let waits = unfinished().map(|t| self.wait_of(t, parked(t))).collect();
            if let Some(trace) = self.recorder.trace_mut() {
                trace.wait_for = waits;
            }
        }
        self.violate("deadlock", format!("no task can run: {stuck}"));
    }

    /// What `task`, parked on `op` at a deadlock, waits for: the object's state that keeps it
    /// waiting and who holds the object (for the pictures, beside the violation's message).
    fn wait_of(&self, task: &Task, op: Op) -> Wait {
        if let Some(wait) = self.said_wait(task, true) {
            return wait;
        }
        let name = |t: usize| self.tasks[t].name.to_string();
        let (state, holders) = match op.object().map(|o| (o, &self.objects[o.0].state)) {
            Some((_, ObjState::Mutex { owner: Some(t) })) => {
                (format!("held by {}", name(*t)), vec![name(*t)])
            }
            Some((
                _,
                ObjState::RwLock {
                    writer: Some(t), ..
                },
            )) => (format!("write-locked by {}", name(*t)), vec![name(*t)]),
            Some((_, ObjState::RwLock { readers, .. })) if *readers > 0 => {
                (format!("read-locked by {readers} reader(s)"), Vec::new())
            }
            Some((_, ObjState::Channel { len, cap })) if matches!(op, Op::Send(_)) => {
                (format!("full: {len} of {cap}"), Vec::new())
            }
            Some((_, ObjState::Channel { cap, .. })) => {
                (format!("empty (capacity {cap})"), Vec::new())
            }
            Some((_, ObjState::Notify { .. })) => ("no notification pending".into(), Vec::new()),
            Some((o, ObjState::Task { .. })) => {
                match self.tasks.iter().position(|t| t.done == Some(o)) {
                    Some(t) => (format!("{} has not finished", name(t)), vec![name(t)]),
                    None => ("not finished".into(), Vec::new()),
                }
            }
            Some((_, ObjState::Wake { .. })) => ("nothing woke it".into(), Vec::new()),
            _ => (String::new(), Vec::new()),
        };
        Wait {
            task: task.name.to_string(),
            op: Describe {
                op,
                objects: &self.objects,
            }
            .to_string(),
            object: op.object().map(|o| self.objects[o.0].name.to_string()),
            state,
            holders,
            idle: op.is_idle_wait(),
        }
    }
}
