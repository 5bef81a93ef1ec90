//! What a run leaves the next one on its thread: its tables emptied, the wakers nobody else
//! holds, and (given back by the search once it has read the run's result, `give_back`) the
//! result's lists. Runs of one test are alike, so each is allocated once per thread instead
//! of once per run (the names a run hands out are kept the same way, in `names.rs`). Only
//! capacity and values equal to fresh ones are kept: nothing a run does depends on them.

use std::cell::RefCell;
use std::sync::Arc;

use crate::rt::op::Object;
use crate::rt::task::{Task, TaskWake};
use crate::vocab::result::Recorded;
use crate::vocab::{RunResult, TaskId};

#[derive(Default)]
pub(super) struct Spare {
    pub tasks: Vec<Task>,
    pub objects: Vec<Object>,
    pub spawned_at: Vec<Option<usize>>,
    pub enabled: Vec<TaskId>,
    /// The recorder's decision list and events table.
    pub decisions: Vec<Recorded>,
    pub task_events: Vec<u64>,
}

thread_local! {
    static SPARE: RefCell<Spare> = RefCell::new(Spare::default());
    static WAKES: RefCell<Vec<Arc<TaskWake>>> = const { RefCell::new(Vec::new()) };
    /// A result's list of task names, for the next run's.
    static NAMES: RefCell<Vec<Arc<str>>> = const { RefCell::new(Vec::new()) };
}

impl Spare {
    /// What the last run on this thread left (empty on a thread's first run).
    pub(super) fn take() -> Spare {
        SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()))
    }

    /// Keeps a finished run's tables for the next run, emptied, and its tasks' wake flags.
    pub(super) fn keep(mut self) {
        WAKES.with(|w| {
            let mut wakes = w.borrow_mut();
            for task in self.tasks.drain(..) {
                // A waker held anywhere else (a future kept past its run) could still set it.
                if let Some(wake) = task.wake_flag.filter(|w| Arc::strong_count(w) == 1) {
                    wake.take();
                    wakes.push(wake);
                }
            }
        });
        self.objects.clear();
        self.spawned_at.clear();
        self.enabled.clear();
        self.task_events.clear();
        SPARE.with(|s| *s.borrow_mut() = self);
    }
}

/// Keeps a run's result's lists for the next run on this thread, once the result is read.
pub(crate) fn give_back(result: RunResult) {
    let (mut decisions, mut names) = (result.schedule.recorded, result.schedule.names);
    let mut spawned_at = result.spawned_at;
    decisions.clear();
    names.clear();
    spawned_at.clear();
    SPARE.with(|s| {
        let mut spare = s.borrow_mut();
        (spare.decisions, spare.spawned_at) = (decisions, spawned_at);
    });
    NAMES.with(|n| *n.borrow_mut() = names);
}

/// An empty list for a result's task names (the last result's, given back, if any).
pub(crate) fn names() -> Vec<Arc<str>> {
    NAMES.with(|n| std::mem::take(&mut *n.borrow_mut()))
}

/// A new task's wake flag, cleared: one an earlier run's task had, or a new one.
pub(crate) fn wake_flag() -> Arc<TaskWake> {
    WAKES.with(|w| w.borrow_mut().pop()).unwrap_or_default()
}
