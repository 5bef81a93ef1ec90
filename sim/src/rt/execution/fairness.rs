//! Fairness (loom's `Yield` state, CHESS's fairness): a task in a fair yield waits until every
//! task that was enabled when it yielded has taken a step since, so that spin-waits stay
//! finite and provable. Sleep sets and partial-order reduction do not see fairness's
//! dependencies: `Explorer` searches a model that yields fairly with visited states only, each
//! state identified with whom its fair yields wait for (by value, or by trace and
//! `PickView::fairness`).

use super::Execution;
use crate::rt::op::Op;
use crate::rt::task::{FairWait, Task, TaskState};
use crate::vocab::TaskId;

/// How many tasks are parked in a fair yield, and whether any yielded fairly in this run (its
/// schedules are then the fair ones); and buffers reused from decision to decision (a
/// spin-wait yields at most of its steps: allocating per yield cost a third of such a step).
#[derive(Default)]
pub(crate) struct Fairness {
    yields: usize,
    yielded: bool,
    /// Per enabled task of the decision at hand, what fairness makes of it.
    scratch: Vec<Flags>,
    /// The lists of ended fair waits, for the next ones.
    spare_waits: Vec<Vec<u32>>,
}

/// What fairness makes of an enabled task at a decision.
#[derive(Clone, Copy)]
struct Flags {
    /// It waits in a fair yield for others to move, and may not go on before them.
    restricted: bool,
    /// It waits in a tokio yield that may go on at once, before the others.
    skipping: bool,
    /// A crash or another intervention: no task to be fair to.
    intervention: bool,
}

impl Fairness {
    /// A task parked in a fair yield.
    pub(crate) fn yielded(&mut self) {
        self.yields += 1;
        self.yielded = true;
    }

    /// A task left its fair yield (granted, or killed).
    pub(crate) fn left_yield(&mut self) {
        self.yields -= 1;
    }

    /// Whether a task waits in a fair yield (else a decision need not look).
    pub(crate) fn any_waiting(&self) -> bool {
        self.yields > 0
    }

    /// Whether any task yielded fairly in this run.
    pub(crate) fn ever_yielded(&self) -> bool {
        self.yielded
    }
}

impl Execution {
    /// Keeps in `enabled` only the tasks a fair scheduler may pick: a task in a fair yield
    /// waits until every task that was enabled when it yielded has taken a step since, or is
    /// no longer enabled. Some task always remains (the one that yielded first waits only on
    /// tasks that have moved since), but if none did, all stay: fairness must never stop a run.
    pub(super) fn fair(&mut self, enabled: &mut Vec<TaskId>) {
        self.start_fair_waits(enabled);
        // A tokio yield may go on at once (tokio may poll the yielder again before the
        // others), but not twice in a row: a cycle of yields still lets the others move, so
        // spin-waits stay finite and provable.
        let mut flags = std::mem::take(&mut self.fairness.scratch);
        flags.clear();
        for &t in enabled.iter() {
            let task = &self.tasks[t.0];
            let may_skip = task.yield_may_continue && !task.continued_yield;
            let waits = task.fair_wait.as_ref().is_some_and(|w| {
                w.unmoved(&self.tasks)
                    .any(|o| enabled.contains(&TaskId(o as usize)))
            });
            flags.push(Flags {
                restricted: waits && !may_skip,
                skipping: waits && may_skip,
                intervention: is_crash(task),
            });
        }
        for (&t, f) in enabled.iter().zip(&flags) {
            self.tasks[t.0].skipping_yield = f.skipping;
        }
        // The eligible tasks (all of them, if none is), in order, then the interventions.
        let any_eligible = flags.iter().any(|f| !f.restricted && !f.intervention);
        let interventions: Vec<TaskId> = (enabled.iter().zip(&flags))
            .filter(|(_, f)| f.intervention)
            .map(|(&t, _)| t)
            .collect();
        let mut kept = 0;
        for (i, f) in flags.iter().enumerate() {
            if !(f.intervention || f.restricted && any_eligible) {
                enabled[kept] = enabled[i];
                kept += 1;
            }
        }
        enabled.truncate(kept);
        enabled.extend(interventions);
        self.fairness.scratch = flags;
    }

    /// A task that has just yielded fairly starts waiting for the others enabled now.
    fn start_fair_waits(&mut self, enabled: &[TaskId]) {
        let steps = self.steps;
        for &t in enabled.iter() {
            let task = &self.tasks[t.0];
            if task.state == TaskState::Parked(Op::YieldNow) && task.fair_wait.is_none() {
                let mut others = self.fairness.spare_waits.pop().unwrap_or_default();
                others.clear();
                others.extend(
                    enabled
                        .iter()
                        .filter(|&&o| o != t && !is_crash(&self.tasks[o.0]))
                        .map(|o| o.0 as u32),
                );
                self.tasks[t.0].fair_wait = Some(FairWait {
                    since: steps,
                    others,
                });
            }
        }
    }

    /// As `pick` takes its step: a task's fair yield ends when it is granted.
    pub(super) fn fair_grant(&mut self, pick: TaskId, op: Op) {
        if op == Op::YieldNow {
            let task = &mut self.tasks[pick.0];
            if let Some(wait) = task.fair_wait.take() {
                self.fairness.spare_waits.push(wait.others);
            }
            task.continued_yield = std::mem::take(&mut task.skipping_yield);
            task.yield_may_continue = false;
            self.fairness.left_yield();
        }
    }
}

/// A node's crash (or another intervention) is no task to be fair to: no one waits for it, and
/// it never runs just because the others wait (see `enable_crashes`).
fn is_crash(task: &Task) -> bool {
    task.state.parked_on().is_some_and(Op::is_intervention)
}
