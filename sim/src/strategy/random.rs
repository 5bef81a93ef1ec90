//! Uniformly random scheduling: at every step any enabled task, with equal probability.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{run_rng, PickView, Stop, Strategy};
use crate::rt::TaskId;

pub struct Random {
    seed: u64,
    rng: ChaCha8Rng,
}

impl Random {
    pub fn new(seed: u64) -> Self {
        Random {
            seed,
            rng: run_rng(seed, 0),
        }
    }
}

impl Strategy for Random {
    /// A sample keeps tokio's paused clock (see `Strategy::jumps_clock`).
    fn jumps_clock(&self) -> bool {
        false
    }

    fn begin_run(&mut self, run: u64) {
        self.rng = run_rng(self.seed, run);
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        Ok(view.enabled[self.rng.gen_range(0..view.enabled.len())])
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
        Ok(self.rng.gen_range(0..n))
    }
}
