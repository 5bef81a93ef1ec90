//! Uniformly random scheduling: at every step any enabled task, with equal probability.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{run_rng, PickView, RunNeeds, Scheduler, Stop};
use crate::vocab::TaskId;

/// Uniformly random scheduling (see the module docs).
pub struct Random {
    seed: u64,
    rng: ChaCha8Rng,
}

impl Random {
    /// Random scheduling seeded by `seed` and each run's index.
    pub fn new(seed: u64) -> Self {
        Random {
            seed,
            rng: run_rng(seed, 0),
        }
    }
}

impl Scheduler for Random {
    /// A sample keeps tokio's paused clock (see `RunNeeds::clock_jumps`).
    fn begin_run(&mut self, run: u64) -> RunNeeds {
        self.rng = run_rng(self.seed, run);
        RunNeeds::SAMPLE
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        Ok(view.enabled[self.rng.gen_range(0..view.enabled.len())])
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
        Ok(self.rng.gen_range(0..n))
    }
}
