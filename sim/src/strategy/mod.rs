//! Scheduling strategies. The executor asks a `Strategy` which enabled task runs next and which
//! value a `choose` draws; it knows nothing else about how they decide. One strategy per file.

mod dfs;
mod guided;
mod livelock;

pub(crate) use livelock::HIDDEN_STATE;
mod pct;
mod plan;
mod portfolio;
mod random;
mod replay;
mod visited;

use serde::{Deserialize, Serialize};

pub use dfs::{Branch, Dfs, Split};
pub use guided::{Guided, Switches};
pub use pct::Pct;
pub use plan::{Plan, PlanProgress};
pub use portfolio::{Portfolio, PORTFOLIO_DEPTHS};
pub use random::Random;
pub use replay::Replay;
pub use visited::{TaskSet, Visited};

use crate::rt::TaskId;
use crate::schedule::Divergence;

/// Why a strategy stops a run early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A replayed schedule does not fit the model.
    Diverged(Divergence),
    /// Every continuation from here is equivalent to one already explored (sleep sets, or a
    /// visited state).
    Pruned,
    /// The run came back to a state on its own path by a fair cycle, twice (see
    /// `livelock.rs`).
    Livelock(String),
    /// The second time round a cycle went elsewhere: the model hides state (see `livelock.rs`).
    HiddenState(String),
}

impl From<Divergence> for Stop {
    fn from(d: Divergence) -> Stop {
        Stop::Diverged(d)
    }
}

/// What a strategy sees at a scheduling point.
pub struct PickView<'a> {
    /// Steps taken so far in this run.
    pub step: usize,
    /// Enabled tasks, in spawn order (never empty).
    pub enabled: &'a [TaskId],
    /// The task that held the baton, if it is still running (it may or may not be enabled).
    pub current: Option<TaskId>,
    /// The objects the step just taken accessed (recorded only with `RunConfig::record_accesses`).
    pub prev_accesses: &'a [crate::run::Access],
    /// Computes a fingerprint of the run's state by value (only for a strategy that
    /// `wants_value_state`; on demand, since it costs a pass over every object and task).
    pub(crate) state_of: Option<&'a dyn Fn() -> u64>,
    pub(crate) names: &'a dyn Fn(TaskId) -> &'a str,
}

impl PickView<'_> {
    /// The fingerprint of the run's state by value, if the strategy `wants_value_state`.
    pub fn state(&self) -> Option<u64> {
        self.state_of.map(|f| f())
    }

    pub fn name(&self, task: TaskId) -> &str {
        (self.names)(task)
    }
}

/// Decides every interleaving and every data choice of a run.
pub trait Strategy {
    /// Prepares run number `run`; all randomness of the run derives from (seed, run).
    fn begin_run(&mut self, run: u64);

    /// Picks the task that runs next.
    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop>;

    /// Picks a value in `0..n` for the task that just called `choose(n)`.
    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Stop>;

    /// Whether the runs should keep a fingerprint of their state by value for `PickView::state`
    /// (costs a hash of every change to an engine object).
    fn wants_value_state(&self) -> bool {
        false
    }

    /// Whether this run may jump its clock ahead of a task that can still run
    /// (`Model::clock_jumps`). Sampling strategies say no: the clock would compete with every
    /// task at every decision and jump early in nearly every run, starving the schedules
    /// without a jump; the systematic searches explore jumps within their bound.
    fn jumps_clock(&self) -> bool {
        true
    }

    /// Called when a run ends, with its result.
    fn end_run(&mut self, _run: &crate::RunResult) {}

    /// Whether the strategy has nothing left to explore (exhaustive strategies only).
    fn exhausted(&self) -> bool {
        false
    }

    /// Runs cut short because they could only repeat an equivalent schedule (sleep sets).
    fn pruned(&self) -> u64 {
        0
    }

    /// Whether a preemption bound kept the search from some schedule (exhaustive strategies
    /// only): a bounded search that ends without having cut one has explored them all.
    fn cut_by_bound(&self) -> bool {
        false
    }

    /// A sample of the branches a reduction pruned, and how many it pruned (DFS with
    /// `Dfs::sampling_pruned`).
    fn pruned_branches(&self) -> (Vec<Branch>, u64) {
        (Vec::new(), 0)
    }

    /// Whether the run that just ended is this exploration's to count (a split DFS walks
    /// into subtrees that other jobs or shards explore).
    fn counts_last_run(&self) -> bool {
        true
    }

    /// The default plan's progress (its strategy only).
    fn plan_progress(&self) -> Option<PlanProgress> {
        None
    }
}

/// How DFS avoids exploring schedules equivalent to ones it has explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reduction {
    /// Plain DFS: every enabled task at every step (to measure the others and test them).
    None,
    /// Sleep sets and source-set DPOR. Not offered (it missed violations and end states of
    /// plain DFS on generated programs): a search asking for it gets visited states, unless
    /// `Explorer::experimental_partial_order` lets the differential tests measure it.
    PartialOrder,
    /// Plain DFS that stops where a run reaches a state (a Mazurkiewicz trace, and under a bound
    /// the running task and the preemptions spent) whose continuations it has explored.
    VisitedStates,
}

impl Reduction {
    /// The reduction a search gets: visited states (by value on a `Model::state_visible`
    /// model, else by trace). Partial-order reduction is not offered, bounded or not: on
    /// generated programs it misses what plain DFS finds (bounded: end states on 6 of 20,000;
    /// unbounded: a violation at seed 175 and end states on 15 more of 800, see
    /// `sim/tests/generated.rs`), where visited states agree with plain DFS on all of them.
    pub fn for_search(_preemption_bound: Option<usize>, _state_visible: bool) -> Reduction {
        Reduction::VisitedStates
    }

    pub fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::PartialOrder => "partial-order",
            Reduction::VisitedStates => "visited-states",
        }
    }
}

impl std::str::FromStr for Reduction {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Reduction::None),
            "partial-order" | "por" => Ok(Reduction::PartialOrder),
            "visited-states" | "states" => Ok(Reduction::VisitedStates),
            other => Err(format!(
                "unknown reduction '{other}' (known: partial-order, visited-states, none)"
            )),
        }
    }
}

/// A strategy as named on the command line and in scenario files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "strategy")]
pub enum StrategyKind {
    /// The default plan, the same everywhere (`Check`, `#[braid::test]`, `braid explore`): a
    /// bounded exhaustive search (DFS with iterative context bounding) and the portfolio,
    /// taking turns run by run (see `Plan`): it proves what the budget allows, and finds what
    /// sampling finds in at most twice the portfolio's runs; never one PCT depth alone.
    Default,
    /// Uniform over enabled tasks at every step.
    Random,
    /// Probabilistic concurrency testing with `depth` - 1 priority change points.
    Pct { depth: usize },
    /// Random and PCT at several depths, round-robin across runs.
    Portfolio,
    /// Exhaustive depth-first search, optionally preemption-bounded, reduced or plain.
    Dfs {
        preemption_bound: Option<usize>,
        reduction: Reduction,
    },
}

impl StrategyKind {
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Default => "default",
            StrategyKind::Random => "random",
            StrategyKind::Pct { .. } => "pct",
            StrategyKind::Dfs { .. } => "dfs",
            StrategyKind::Portfolio => "portfolio",
        }
    }

    /// Whether runs are seeded samples (random, PCT) or an exhaustive enumeration (DFS).
    pub fn is_exhaustive(&self) -> bool {
        matches!(self, StrategyKind::Dfs { .. })
    }

    /// An unbounded or bounded DFS with the default reduction for a model that is not
    /// state-visible (a `#[braid::test]`'s): plain DFS when the model does not declare
    /// `reduction_safe`.
    pub fn dfs(preemption_bound: Option<usize>) -> StrategyKind {
        StrategyKind::Dfs {
            preemption_bound,
            reduction: Reduction::for_search(preemption_bound, false),
        }
    }

    pub fn depth(&self) -> Option<usize> {
        match self {
            StrategyKind::Pct { depth } => Some(*depth),
            _ => None,
        }
    }

    /// Builds the strategy for an exploration seeded with `seed`. `steps` estimates a run's
    /// length (PCT places its change points within it).
    pub fn build(&self, seed: u64, steps: usize) -> Box<dyn Strategy> {
        match *self {
            StrategyKind::Random => Box::new(Random::new(seed)),
            StrategyKind::Pct { depth } => Box::new(Pct::new(seed, depth, steps)),
            StrategyKind::Portfolio => Box::new(Portfolio::new(seed, steps)),
            // `Explorer` builds it for its model (by value, reduction); this is the plain form.
            StrategyKind::Default => Box::new(Plan::new(seed, steps, Reduction::None, false)),
            StrategyKind::Dfs {
                preemption_bound,
                reduction,
            } => Box::new(Dfs::new(preemption_bound, reduction)),
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
