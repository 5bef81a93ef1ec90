//! PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010): every task gets a random
//! distinct priority; the highest-priority enabled task runs; at d-1 random steps within the
//! estimated run length k the running task drops below all others. A bug of depth d is found
//! in one run with probability at least 1/(n * k^(d-1)).
//!
//! Unlike shuttle's PCT, a task that reaches a `yield_point` keeps its priority: a yield point
//! stands for a real await, not for a hint that the task is spinning.

use rand::seq::index::sample;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{run_rng, PickView, RunNeeds, Scheduler, Stop};
use crate::vocab::TaskId;

/// The PCT strategy (see the module docs).
pub struct Pct {
    seed: u64,
    depth: usize,
    steps: usize,
    rng: ChaCha8Rng,
    /// Priority per task id; higher runs first. Change points assign 0..depth-1.
    priorities: Vec<u64>,
    /// Steps at which the running task is demoted, ascending, with the priority it gets.
    change_points: Vec<(usize, u64)>,
}

impl Pct {
    /// PCT for bugs of depth `depth`, with its change points placed within `steps` steps (the
    /// estimated run length), seeded by `seed` and the run's index.
    pub fn new(seed: u64, depth: usize, steps: usize) -> Self {
        let mut pct = Pct {
            seed,
            depth: depth.max(1),
            steps: steps.max(1),
            rng: run_rng(seed, 0),
            priorities: Vec::new(),
            change_points: Vec::new(),
        };
        pct.begin_run(0);
        pct
    }

    /// The guaranteed per-run probability of hitting a given depth-d bug, 1/(n * k^(d-1)).
    pub fn bound(tasks: usize, steps: usize, depth: usize) -> f64 {
        let k = steps.max(1) as f64;
        1.0 / (tasks.max(1) as f64 * k.powi(depth.max(1) as i32 - 1))
    }

    fn priority(&mut self, task: TaskId) -> u64 {
        while self.priorities.len() <= task.0 {
            // Initial priorities sit above every change-point priority.
            let p = self.depth as u64 + self.rng.gen_range(0..u64::MAX / 2);
            self.priorities.push(p);
        }
        self.priorities[task.0]
    }
}

impl Scheduler for Pct {
    /// A sample keeps tokio's paused clock (see `RunNeeds::clock_jumps`).
    fn begin_run(&mut self, run: u64) -> RunNeeds {
        self.rng = run_rng(self.seed, run);
        self.priorities.clear();
        let changes = self.depth - 1;
        let mut points: Vec<usize> = if changes == 0 {
            Vec::new()
        } else {
            let span = self.steps.max(changes);
            sample(&mut self.rng, span, changes).into_iter().collect()
        };
        points.sort_unstable();
        // The i-th change point (in step order) gets priority depth-1-i: later demotions sink lower.
        self.change_points = points
            .into_iter()
            .enumerate()
            .map(|(i, step)| (step + 1, (changes - i) as u64 - 1))
            .collect();
        RunNeeds::SAMPLE
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        // Priorities are assigned in spawn order, so the draws do not depend on who is enabled.
        for &t in view.enabled {
            self.priority(t);
        }
        if let Some(cur) = view.current {
            self.priority(cur);
        }
        if let Some(&(_, low)) = self.change_points.iter().find(|(s, _)| *s == view.step) {
            let demoted = view.current.unwrap_or_else(|| {
                *view
                    .enabled
                    .iter()
                    .max_by_key(|t| self.priorities[t.0])
                    .unwrap()
            });
            self.priorities[demoted.0] = low;
        }
        let best = *view
            .enabled
            .iter()
            .max_by_key(|t| (self.priorities[t.0], std::cmp::Reverse(t.0)))
            .expect("pick_task is only asked with an enabled task");
        Ok(best)
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
        Ok(self.rng.gen_range(0..n))
    }
}
