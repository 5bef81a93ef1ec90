//! Several strategies interleaved across runs: run r uses member r mod m, seeded by (seed, r)
//! like any other run, so each run still reproduces alone. Random finds shallow bugs in a few
//! runs; PCT at several depths covers the deeper orderings without guessing the depth.

use super::{Pct, PickView, Random, RunNeeds, Scheduler, Stop};
use crate::vocab::RunResult;
use crate::vocab::TaskId;

/// PCT depths in the portfolio, after uniform random.
pub const PORTFOLIO_DEPTHS: [usize; 3] = [2, 3, 5];

/// Random and PCT at several depths, one per run in turn (see the module docs).
pub struct Portfolio {
    members: Vec<Box<dyn Scheduler>>,
    active: usize,
}

impl Portfolio {
    /// The portfolio seeded by `seed`, its PCT members' change points within `steps` steps.
    pub fn new(seed: u64, steps: usize) -> Self {
        let mut members: Vec<Box<dyn Scheduler>> = vec![Box::new(Random::new(seed))];
        for depth in PORTFOLIO_DEPTHS {
            members.push(Box::new(Pct::new(seed, depth, steps)));
        }
        Portfolio { members, active: 0 }
    }
}

impl Scheduler for Portfolio {
    fn begin_run(&mut self, run: u64) -> RunNeeds {
        self.active = (run % self.members.len() as u64) as usize;
        self.members[self.active].begin_run(run)
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        self.members[self.active].pick_task(view)
    }

    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Stop> {
        self.members[self.active].pick_value(step, n)
    }

    fn end_run(&mut self, run: &RunResult) {
        self.members[self.active].end_run(run);
    }
}
