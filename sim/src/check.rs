//! A check for a user's own `#[test]`s, in the style of stateright's checker builder:
//!
//! ```ignore
//! Check::new(model).runs(20_000).assert_holds(); // the default plan: DFS and sampling
//! Check::new(model).strategy(StrategyKind::Pct { depth: 3 }).runs(20_000).assert_holds();
//! Check::new(buggy).runs(20_000).assert_violates("delivery-order");
//! ```
//!
//! Environment overrides, as proptest and madsim users expect: `BRAID_SEED` (the exploration
//! seed), `BRAID_RUNS` (run budget), `BRAID_TIME` (seconds), and `BRAID_REPLAY` (a replay file:
//! follow that schedule instead of exploring, to debug a failure).

use std::path::PathBuf;
use std::time::Duration;

use crate::env_overrides::Overrides;
use crate::explore::{Explorer, SearchVerdict, Summary};
use crate::model::Model;
use crate::replay_file::ReplayFile;
use crate::run::{RunConfig, RunOutcome};
use crate::strategy::StrategyKind;

/// What a check found.
#[derive(Debug)]
pub enum Verdict {
    /// Explored (or replayed) without a violation.
    Holds {
        /// Runs explored (1 for a replay).
        runs: u64,
        /// Every schedule was explored: a proof for the model's sizes.
        exhaustive: bool,
    },
    /// The first failing run of each broken invariant.
    Violated(Vec<(String, String)>),
    /// Nothing a pass could rest on: no run reached its end, or a requested proof (DFS) ran out
    /// of budget before it finished; says how far it got.
    Inconclusive(String),
}

/// A check of one model for a user's `#[test]` (see the module docs): a builder over `Explorer`
/// that reads the environment overrides and judges the summary.
pub struct Check {
    model: Box<dyn Model>,
    strategy: StrategyKind,
    seed: u64,
    runs: Option<u64>,
    time: Option<Duration>,
    max_steps: usize,
    replay: Option<PathBuf>,
}

impl Check {
    /// A check of `model` under the default plan, seed 1, the default budget and step limit.
    pub fn new(model: Box<dyn Model>) -> Self {
        Check {
            model,
            strategy: StrategyKind::Default,
            seed: 1,
            runs: None,
            time: None,
            max_steps: RunConfig::default().max_steps,
            replay: None,
        }
    }

    /// The strategy to explore with (default: the plan, DFS and sampling in turns).
    pub fn strategy(mut self, strategy: StrategyKind) -> Self {
        self.strategy = strategy;
        self
    }

    /// The exploration's seed (`BRAID_SEED` overrides it).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// At most this many runs (`BRAID_RUNS` overrides it).
    pub fn runs(mut self, runs: u64) -> Self {
        self.runs = Some(runs);
        self
    }

    /// At most this much wall time (`BRAID_TIME` overrides it).
    pub fn time(mut self, time: Duration) -> Self {
        self.time = Some(time);
        self
    }

    /// Cut each run after this many steps.
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Follows this replay file's schedule instead of exploring.
    pub fn replay(mut self, file: impl Into<PathBuf>) -> Self {
        self.replay = Some(file.into());
        self
    }

    fn with_env(mut self) -> Self {
        let env = Overrides::read();
        self.seed = env.seed.unwrap_or(self.seed);
        self.runs = env.runs.or(self.runs);
        self.time = env.time.or(self.time);
        self.replay = env.replay.or(self.replay);
        self
    }

    /// Runs the check (after applying the environment overrides).
    pub fn run(self) -> Verdict {
        let check = self.with_env();
        if let Some(path) = &check.replay {
            let file = ReplayFile::load(path).unwrap_or_else(|e| panic!("{e}"));
            let r = file.follow(check.model.as_ref(), false);
            return match r.outcome {
                RunOutcome::Violation(v) => Verdict::Violated(vec![(v.invariant, v.message)]),
                RunOutcome::Diverged(d) => panic!("{}: {d}", path.display()),
                _ => Verdict::Holds {
                    runs: 1,
                    exhaustive: false,
                },
            };
        }
        let mut explorer = Explorer::new(check.model.as_ref())
            .strategy(check.strategy)
            .seed(check.seed)
            .max_steps(check.max_steps);
        if let Some(runs) = check.runs {
            explorer = explorer.runs(runs);
        }
        if let Some(time) = check.time {
            explorer = explorer.time(time);
        }
        let summary: Summary = explorer.run().unwrap_or_else(|e| panic!("{e}"));
        let verdict = summary.verdict(check.strategy);
        if let SearchVerdict::Inconclusive(why) = verdict {
            Verdict::Inconclusive(why)
        } else if verdict == SearchVerdict::Holds {
            // A coarse grain's "holds" stands only if access-grain runs find nothing either.
            let runs = crate::explore::GRAIN_CHECK_RUNS;
            let hidden = crate::explore::grain_check(
                check.model.as_ref(),
                check.seed,
                runs,
                check.max_steps,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            if let Some(f) = hidden {
                return Verdict::Violated(vec![(f.invariant, f.message)]);
            }
            Verdict::Holds {
                runs: summary.runs,
                exhaustive: summary.exhaustive,
            }
        } else {
            Verdict::Violated(
                summary
                    .violations
                    .into_iter()
                    .map(|f| (f.invariant, f.message))
                    .collect(),
            )
        }
    }

    /// Panics, naming the invariant and message, unless every run holds.
    pub fn assert_holds(self) {
        match self.run() {
            Verdict::Violated(found) => {
                let (inv, msg) = &found[0];
                panic!("braid: invariant {inv} violated: {msg} (explore the scenario with `braid explore` for a replay file)");
            }
            Verdict::Inconclusive(why) => panic!("braid: nothing proved: {why}"),
            Verdict::Holds { .. } => {}
        }
    }

    /// Panics unless exploration breaks `invariant`.
    pub fn assert_violates(self, invariant: &str) {
        match self.run() {
            Verdict::Violated(found) if found.iter().any(|(i, _)| i == invariant) => {}
            Verdict::Violated(found) => panic!(
                "braid: expected {invariant} to be violated, found {:?}",
                found.iter().map(|(i, _)| i).collect::<Vec<_>>()
            ),
            Verdict::Holds { runs, .. } => {
                panic!("braid: expected {invariant} to be violated; {runs} runs held")
            }
            Verdict::Inconclusive(why) => {
                panic!("braid: expected {invariant} to be violated; {why}")
            }
        }
    }
}
