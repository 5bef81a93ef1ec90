//! A check's settings, from the builder and then the environment, as proptest and madsim users
//! expect: `BRAID_SEED`, `BRAID_RUNS`, `BRAID_TIME` (seconds), `BRAID_REPLAY` (a replay file),
//! `BRAID_OUT` (where failures' replay files go), `BRAID_STRATEGY` (`default`, `random`,
//! `pct` or `pct:<depth>`, `portfolio`, `dfs` or `dfs:<preemption bound>`), `BRAID_REPORT`
//! (a directory where each check writes its outcome as JSON, for `braid explore --test`), and
//! `BRAID_SHARD` (`i/n`: search shard i of n of the runs; see `shard.rs`).

use std::path::PathBuf;
use std::time::Duration;

use sim::env_overrides::{var, Overrides};
use sim::strategy::StrategyKind;

use crate::shard::Shard;

#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub strategy: StrategyKind,
    pub seed: u64,
    pub runs: Option<u64>,
    pub time: Option<Duration>,
    pub max_steps: usize,
    pub out: Option<PathBuf>,
    pub regressions: Option<PathBuf>,
    pub replay: Option<PathBuf>,
    pub report_dir: Option<PathBuf>,
    pub shard: Option<Shard>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            strategy: StrategyKind::Default,
            seed: 1,
            runs: None,
            time: None,
            max_steps: sim::RunConfig::default().max_steps,
            out: None,
            regressions: None,
            replay: None,
            report_dir: None,
            shard: None,
        }
    }
}

impl Settings {
    /// The settings with the environment's overrides: the four every check takes
    /// ([`sim::env_overrides::Overrides`]), and the front door's own. A malformed value panics,
    /// naming the variable.
    pub fn with_env(mut self) -> Self {
        let env = Overrides::read();
        self.seed = env.seed.unwrap_or(self.seed);
        self.runs = env.runs.or(self.runs);
        self.time = env.time.or(self.time);
        self.replay = env.replay.or(self.replay);
        if let Some(dir) = var("BRAID_OUT", "a directory", |v| Some(PathBuf::from(v))) {
            self.out = Some(dir);
        }
        let strategies = "default, random, pct, pct:<depth>, portfolio, dfs or dfs:<bound>";
        if let Some(strategy) = var("BRAID_STRATEGY", strategies, parse_strategy) {
            self.strategy = strategy;
        }
        if let Some(dir) = var("BRAID_REPORT", "a directory", |v| Some(PathBuf::from(v))) {
            self.report_dir = Some(dir);
        }
        if let Some(shard) = var("BRAID_SHARD", "i/n with 1 <= i <= n", Shard::parse) {
            self.shard = Some(shard);
        }
        self
    }
}

/// `pct:2`, `dfs:3`, `random`, ... as `BRAID_STRATEGY` gives them.
pub(crate) fn parse_strategy(text: &str) -> Option<StrategyKind> {
    let (name, arg) = match text.split_once(':') {
        Some((name, arg)) => (name, Some(arg.parse::<usize>().ok()?)),
        None => (text, None),
    };
    Some(match (name, arg) {
        ("default", None) => StrategyKind::Default,
        ("random", None) => StrategyKind::Random,
        ("portfolio", None) => StrategyKind::Portfolio,
        ("pct", depth) => StrategyKind::Pct {
            depth: depth.unwrap_or(3).max(1),
        },
        ("dfs", bound) => StrategyKind::dfs(bound),
        _ => return None,
    })
}
