//! Partial order sampling (POS; Yuan, Yang and Gu, "Partial Order Aware Concurrency
//! Sampling", CAV 2018): every task's next step gets a random priority, the enabled step of the
//! highest priority runs, and after it the steps that race with it (the chosen task's next
//! one, and every other task's pending step on the same object) draw new priorities. Random
//! walk samples partial orders very unevenly (an order that needs one task to wait through
//! many independent steps of others is rare); POS samples them far more evenly, without a
//! depth to guess as PCT's.
//!
//! braid knows each parked task's pending object (`PickView::pending_object`), which is what
//! "races with" needs: two steps on one object. A task blocked on its waker waits on its
//! wake-up object, which the step that wakes it writes, so that step re-draws its priority too.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{run_rng, PickView, RunNeeds, Scheduler, Stop};
use crate::vocab::TaskId;

/// The POS strategy (see the module docs).
pub struct Pos {
    seed: u64,
    rng: ChaCha8Rng,
    /// Per task id, the priority of its next step (`None`: to be drawn when it is enabled).
    priorities: Vec<Option<u64>>,
}

impl Pos {
    /// POS seeded by `seed` and each run's index.
    pub fn new(seed: u64) -> Self {
        Pos {
            seed,
            rng: run_rng(seed, 0),
            priorities: Vec::new(),
        }
    }

    fn priority(&mut self, task: TaskId) -> u64 {
        if self.priorities.len() <= task.0 {
            self.priorities.resize(task.0 + 1, None);
        }
        *self.priorities[task.0].get_or_insert_with(|| self.rng.gen())
    }
}

impl Scheduler for Pos {
    /// A sample keeps tokio's paused clock (see `RunNeeds::clock_jumps`).
    fn begin_run(&mut self, run: u64) -> RunNeeds {
        self.rng = run_rng(self.seed, run);
        self.priorities.clear();
        RunNeeds::SAMPLE
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        let mut best = view.enabled[0];
        let mut best_priority = self.priority(best);
        for &task in &view.enabled[1..] {
            let p = self.priority(task);
            if p > best_priority {
                (best, best_priority) = (task, p);
            }
        }
        // The steps racing with the one chosen draw anew, its task's next step too.
        self.priorities[best.0] = None;
        if let Some(object) = view.pending_object(best) {
            for (task, priority) in self.priorities.iter_mut().enumerate() {
                if view.pending_object(TaskId(task)) == Some(object) {
                    *priority = None;
                }
            }
        }
        Ok(best)
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
        Ok(self.rng.gen_range(0..n))
    }
}
