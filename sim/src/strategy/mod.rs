//! Scheduling strategies. The executor asks a `Scheduler` (the trait every strategy here
//! implements) which enabled task runs next and which value a `choose` draws; it knows nothing
//! else about how they decide. One strategy per file. Which one a search uses is a
//! `StrategyKind` (`braid::Strategy` to a test), built into a `Box<dyn Scheduler>`.

mod dfs;
mod guided;
mod livelock;

pub(crate) use livelock::HIDDEN_STATE;
mod pct;
mod plan;
mod portfolio;
mod pos;
mod random;
mod replay;
mod visited;

use serde::{Deserialize, Serialize};

pub use dfs::{Branch, Dfs, Split};
pub use guided::{Guided, Switches};
pub use pct::Pct;
pub use plan::{Plan, PlanProgress};
pub use portfolio::{Portfolio, PORTFOLIO_DEPTHS};
pub use pos::Pos;
pub use random::Random;
pub use replay::Replay;
pub use visited::{TaskSet, Visited};

use crate::schedule::Divergence;
use crate::vocab::TaskId;

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

/// A state's fingerprints by value: as it is, and the smallest of its images (its orbit's).
#[derive(Clone, Debug)]
pub struct Fingerprint {
    /// The state as it is.
    pub state: u64,
    /// The smallest fingerprint among the state's images under the model's symmetry (`state`
    /// when there is none to take).
    pub orbit: u64,
    /// The renaming that gives `orbit`: task `i` of this run has task `rename[i]`'s role in the
    /// image (empty: the identity).
    pub rename: Vec<usize>,
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
    pub prev_accesses: &'a [crate::vocab::Access],
    /// Computes a fingerprint of the run's state by value, and with `true` its orbit's too
    /// (only for a strategy that asked for it, `RunNeeds::value_state`; on demand, since it
    /// costs a pass over every object and task, and one per lane for the orbit).
    pub(crate) state_of: Option<&'a dyn Fn(bool) -> Fingerprint>,
    /// A digest of the fairness state (0 before any task yielded fairly): whom each task in a
    /// fair yield still waits for, and which tasks' yields may or may not go on at once. Two
    /// states equal by trace may still differ in who may run next; identified by trace, a
    /// state includes this (see `Dfs::visit`). On demand: only a search by trace asks.
    pub(crate) fairness: &'a dyn Fn() -> u64,
    pub(crate) names: &'a dyn Fn(TaskId) -> &'a str,
    pub(crate) pending: &'a dyn Fn(TaskId) -> Option<crate::vocab::ObjId>,
}

impl PickView<'_> {
    /// The fingerprint of the run's state by value, if the strategy asked for it
    /// (`RunNeeds::value_state`).
    pub fn state(&self) -> Option<u64> {
        self.state_of.map(|f| f(false).state)
    }

    /// The state's fingerprints by value, its own and its orbit's under the model's symmetry
    /// (`Model::symmetric_members`), if the strategy asked for them.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.state_of.map(|f| f(true))
    }

    /// The name of task `task` (stable across runs: what replay files record).
    pub fn name(&self, task: TaskId) -> &str {
        (self.names)(task)
    }

    /// The object task `task`'s pending step touches, if it is parked on one (for a task
    /// blocked on its waker, its wake-up object).
    pub fn pending_object(&self, task: TaskId) -> Option<crate::vocab::ObjId> {
        (self.pending)(task)
    }
}

/// The engine's scheduler: decides every interleaving and every data choice of a run. Every
/// strategy in this module is one (`StrategyKind::build` makes them), and answers these;
/// what only a search knows (how far it got, what it pruned) is one question, `progress`, so
/// that a sampler need not say "nothing" seven times over (shuttle's `Scheduler` has three).
pub trait Scheduler {
    /// Prepares run number `run`; all randomness of the run derives from (seed, run). Says what
    /// the run needs of the engine, which may differ run by run (the plan takes turns).
    fn begin_run(&mut self, run: u64) -> RunNeeds;

    /// Picks the task that runs next.
    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop>;

    /// Picks a value in `0..n` for the task that just called `choose(n)`.
    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Stop>;

    /// Called when a run ends, with its result.
    fn end_run(&mut self, _run: &crate::RunResult) {}

    /// How far the search has got (exhaustive strategies and the plan; a sampler never ends
    /// by itself, prunes nothing and counts every run).
    fn progress(&self) -> SearchProgress<'_> {
        SearchProgress::SAMPLING
    }
}

/// What a run needs of the engine, as its strategy says when it begins (`Scheduler::begin_run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunNeeds {
    /// Keep a fingerprint of the run's state by value for `PickView::state` (costs a hash of
    /// every change to an engine object).
    pub value_state: bool,
    /// The run may jump its clock ahead of a task that can still run (`Model::clock_jumps`).
    /// Sampling strategies say no: the clock would compete with every task at every decision
    /// and jump early in nearly every run, starving the schedules without a jump; the
    /// systematic searches explore jumps within their bound.
    pub clock_jumps: bool,
}

impl RunNeeds {
    /// A systematic search's run by trace: clock jumps within its bound, no state by value.
    pub const SEARCH: RunNeeds = RunNeeds {
        value_state: false,
        clock_jumps: true,
    };
    /// A sampled run keeps tokio's paused clock, and needs no state by value.
    pub const SAMPLE: RunNeeds = RunNeeds {
        value_state: false,
        clock_jumps: false,
    };
}

/// How far a search has got (`Scheduler::progress`), read after each run.
#[derive(Clone, Copy, Debug)]
pub struct SearchProgress<'a> {
    /// Nothing is left to explore (exhaustive strategies only).
    pub exhausted: bool,
    /// Runs cut short because they could only repeat an equivalent schedule (sleep sets).
    pub pruned: u64,
    /// A preemption bound kept the search from some schedule: a bounded search that ends
    /// without having cut one has explored them all.
    pub cut_by_bound: bool,
    /// The run that just ended is this exploration's to count (a split DFS walks into
    /// subtrees that other jobs or shards explore).
    pub counts_last_run: bool,
    /// A sample of the branches a reduction pruned, and how many it pruned (DFS with
    /// `Dfs::sampling_pruned`).
    pub pruned_sample: &'a [Branch],
    /// How many branches the reduction pruned in all (`pruned_sample` is a sample of them).
    pub pruned_branches: u64,
    /// The default plan's progress (its strategy only).
    pub plan: Option<PlanProgress>,
}

impl SearchProgress<'_> {
    /// A sampler's: never exhausted, nothing pruned or cut, every run counted.
    pub const SAMPLING: SearchProgress<'static> = SearchProgress {
        exhausted: false,
        pruned: 0,
        cut_by_bound: false,
        counts_last_run: true,
        pruned_sample: &[],
        pruned_branches: 0,
        plan: None,
    };
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

    /// The name the command line and summary files use (`none`, `partial-order`, `visited-states`).
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
    /// bounded exhaustive search (DFS with iterative context bounding) and sampling (random,
    /// then mostly PCT at depths 6 to 10), taking turns run by run in measured proportions (see
    /// `Plan`): it proves what the budget allows, and finds most bugs within twice the runs of
    /// the best single strategy for them.
    Default,
    /// Uniform over enabled tasks at every step.
    Random,
    /// Probabilistic concurrency testing with `depth` - 1 priority change points.
    Pct {
        /// The bug depth d the search targets (d - 1 change points a run).
        depth: usize,
    },
    /// Random and PCT at several depths, round-robin across runs.
    Portfolio,
    /// Partial order sampling: random priorities per step, re-drawn for the steps that race
    /// with the one taken (see `Pos`).
    Pos,
    /// Exhaustive depth-first search, optionally preemption-bounded, reduced or plain.
    Dfs {
        /// At most this many preemptions a schedule (`None`: every schedule).
        preemption_bound: Option<usize>,
        /// How the search skips schedules equivalent to explored ones.
        reduction: Reduction,
    },
}

impl StrategyKind {
    /// The name the command line, scenario files and reports use (`default`, `random`, `pct`,
    /// `dfs`, `portfolio`).
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Default => "default",
            StrategyKind::Random => "random",
            StrategyKind::Pct { .. } => "pct",
            StrategyKind::Dfs { .. } => "dfs",
            StrategyKind::Portfolio => "portfolio",
            StrategyKind::Pos => "pos",
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

    /// PCT's bug depth, for PCT.
    pub fn depth(&self) -> Option<usize> {
        match self {
            StrategyKind::Pct { depth } => Some(*depth),
            _ => None,
        }
    }

    /// Builds the strategy for an exploration seeded with `seed`. `steps` estimates a run's
    /// length (PCT places its change points within it).
    pub fn build(&self, seed: u64, steps: usize) -> Box<dyn Scheduler> {
        match *self {
            StrategyKind::Random => Box::new(Random::new(seed)),
            StrategyKind::Pct { depth } => Box::new(Pct::new(seed, depth, steps)),
            StrategyKind::Portfolio => Box::new(Portfolio::new(seed, steps)),
            StrategyKind::Pos => Box::new(Pos::new(seed)),
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
