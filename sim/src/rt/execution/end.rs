//! How a run ends: the end recorded (and traced) once, a violation, a panic nobody took
//! blamed before the end it led to, a task's own end (the main task's ends the run).

use super::{End, Execution};
use crate::rt::op::ObjState;
use crate::rt::task::TaskState;
use crate::trace::TraceLine;
use crate::vocab::TaskId;
use crate::Violation;

impl Execution {
    /// Ends the run. Parked tasks stay parked; the driver returns.
    pub(crate) fn finish(&mut self, end: End) {
        if self.end.is_some() {
            return;
        }
        let end = self.blame_unobserved_panic(end);
        let step = self.steps;
        self.recorder.line(|| TraceLine::End {
            step,
            text: match &end {
                End::Quiescent => "quiescent: no task can run and none is stuck".to_string(),
                End::Violation(v) => format!("violation {}: {}", v.invariant, v.message),
                End::Divergence(d) => d.to_string(),
                End::Pruned => "pruned: equivalent to a schedule already explored".to_string(),
            },
        });
        self.end = Some(end);
        // Parked tasks stay parked: the driver drops their futures once the verdict is in
        // (see `model_task::drop_left`).
        self.current = None;
    }

    /// A quiescent run fails after all: a monitor judged its end state (see `sim::watch`).
    pub(crate) fn fail_at_quiescence(&mut self, v: Violation) {
        self.recorder
            .retell_end(|| format!("quiescent; violation {}: {}", v.invariant, v.message));
        self.end = Some(End::Violation(v));
    }

    pub(crate) fn violate(&mut self, invariant: &str, message: String) {
        let step = self.steps;
        self.finish(End::Violation(Violation {
            invariant: invariant.to_string(),
            message,
            step,
        }));
    }

    /// A task panic caught for its joiner: its number, to say when the joiner takes it.
    pub(crate) fn panic_caught(&mut self, message: String) -> u64 {
        self.next_panic += 1;
        self.unobserved_panics.insert(self.next_panic, message);
        self.next_panic
    }

    /// The joiner took the caught panic number `id`.
    pub(crate) fn panic_observed(&mut self, id: u64) {
        self.unobserved_panics.remove(&id);
    }

    /// A run that ends with a task's panic nobody took (quiescent, or stuck because of it)
    /// fails with that panic: the root cause, before the deadlock or the end it led to.
    /// (tokio would only print it; braid is stricter, and says so.)
    fn blame_unobserved_panic(&mut self, end: End) -> End {
        let Some(panic) = self.unobserved_panics.values().next() else {
            return end;
        };
        let after = match &end {
            End::Quiescent => "the run ended without anyone taking it".to_string(),
            End::Violation(v)
                if matches!(&*v.invariant, "deadlock" | "livelock" | "step-bound") =>
            {
                format!("the run then ended in {}: {}", v.invariant, v.message)
            }
            _ => return end,
        };
        End::Violation(Violation {
            invariant: "panic".to_string(),
            message: format!(
                "{panic}; nobody observed it through its JoinHandle, and {after} (tokio would \
                 only print the panic; braid fails the run)"
            ),
            step: self.steps,
        })
    }

    pub(crate) fn task_finished(&mut self, id: TaskId) {
        self.tasks[id.0].state = TaskState::Finished { killed: false };
        if let Some(done) = self.tasks[id.0].done {
            // The end is the task's last step's write: a join depends on it.
            *self.state_mut(done) = ObjState::Task { finished: true };
            self.set_value(done, || 1);
        }
        if self.main == Some(id) {
            // As tokio's runtime drops every task left when a `#[tokio::test]` body returns
            // (its default runtime polls nothing after that): they take no more steps, so an
            // endless background loop is neither a livelock nor a deadlock.
            self.finish(End::Quiescent);
            self.recorder
                .retell_end(|| "the main task returned: the tasks left are dropped".to_string());
            return;
        }
        self.decide();
    }

    pub(crate) fn task_panicked(&mut self, id: TaskId, message: String) {
        self.tasks[id.0].state = TaskState::Finished { killed: false };
        let name = &self.tasks[id.0].name;
        let message = format!("task {name} panicked: {message}");
        self.violate("panic", message);
    }
}
