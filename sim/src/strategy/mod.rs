//! Scheduling strategies. The executor asks a `Strategy` which enabled task runs next and which
//! value a `choose` draws; it knows nothing else about how they decide. One strategy per file.

mod guided;
mod pct;
mod random;
mod replay;

use serde::{Deserialize, Serialize};

pub use guided::{Guided, Switches};
pub use pct::Pct;
pub use random::Random;
pub use replay::Replay;

use crate::rt::TaskId;
use crate::schedule::Divergence;

/// What a strategy sees at a scheduling point.
pub struct PickView<'a> {
    /// Steps taken so far in this run.
    pub step: usize,
    /// Enabled tasks, in spawn order (never empty).
    pub enabled: &'a [TaskId],
    /// The task that held the baton, if it is still running (it may or may not be enabled).
    pub current: Option<TaskId>,
    pub(crate) names: &'a dyn Fn(TaskId) -> &'a str,
}

impl PickView<'_> {
    pub fn name(&self, task: TaskId) -> &str {
        (self.names)(task)
    }
}

/// Decides every interleaving and every data choice of a run.
pub trait Strategy {
    /// Prepares run number `run`; all randomness of the run derives from (seed, run).
    fn begin_run(&mut self, run: u64);

    /// Picks the task that runs next.
    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Divergence>;

    /// Picks a value in `0..n` for the task that just called `choose(n)`.
    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Divergence>;

    /// Called when a run ends, with its length in steps.
    fn end_run(&mut self, _steps: usize) {}
}

/// A strategy as named on the command line and in scenario files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "strategy")]
pub enum StrategyKind {
    /// Uniform over enabled tasks at every step.
    Random,
    /// Probabilistic concurrency testing with `depth` - 1 priority change points.
    Pct { depth: usize },
}

impl StrategyKind {
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Pct { .. } => "pct",
        }
    }

    pub fn depth(&self) -> Option<usize> {
        match self {
            StrategyKind::Random => None,
            StrategyKind::Pct { depth } => Some(*depth),
        }
    }

    /// Builds the strategy for an exploration seeded with `seed`. `steps` estimates a run's
    /// length (PCT places its change points within it).
    pub fn build(&self, seed: u64, steps: usize) -> Box<dyn Strategy> {
        match *self {
            StrategyKind::Random => Box::new(Random::new(seed)),
            StrategyKind::Pct { depth } => Box::new(Pct::new(seed, depth, steps)),
        }
    }
}

/// The ChaCha stream for run `run` of an exploration seeded with `seed`: independent per run, so
/// run k can be reproduced alone.
pub(crate) fn run_rng(seed: u64, run: u64) -> rand_chacha::ChaCha8Rng {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run);
    rng
}
