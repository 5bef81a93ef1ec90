//! A check's settings, from the builder and then the environment, as proptest and madsim users
//! expect: `BRAID_SEED`, `BRAID_RUNS`, `BRAID_TIME` (seconds), `BRAID_REPLAY` (a replay file),
//! `BRAID_OUT` (where failures' replay files go), `BRAID_STRATEGY` (`default`, `random`,
//! `pct` or `pct:<depth>`, `portfolio`, `pos`, `dfs` or `dfs:<preemption bound>`), `BRAID_REPORT`
//! (a directory where each check writes its outcome as JSON, for `braid explore --test`), and
//! `BRAID_SHARD` (`i/n`: search shard i of n of the runs; see `Shard` and `shard.rs`).

use std::path::PathBuf;
use std::time::Duration;

use sim::env_overrides::{var, Overrides};
use sim::explore::Explorer;
use sim::strategy::StrategyKind;
use sim::summary_file::ShardInfo;

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
    /// Audit a reduced search on a sample of what it pruned (`crate::audit`).
    pub audit: bool,
    /// The user says every state the tests' tasks share goes through braid
    /// (`BRAID_STATE_SEEN=1`, `braid test --state-seen`): a test declared to share plain state,
    /// every `#[tokio::test]` through the drop-in among them, is searched with reduction.
    pub state_seen: bool,
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
            audit: true,
            state_seen: false,
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
        let strategies = "default, random, pct, pct:<depth>, portfolio, pos, dfs or dfs:<bound>";
        if let Some(strategy) = var("BRAID_STRATEGY", strategies, parse_strategy) {
            self.strategy = strategy;
        }
        if let Some(dir) = var("BRAID_REPORT", "a directory", |v| Some(PathBuf::from(v))) {
            self.report_dir = Some(dir);
        }
        if let Some(shard) = var("BRAID_SHARD", "i/n with 1 <= i <= n", Shard::parse) {
            self.shard = Some(shard);
        }
        let yes_or_no = |v: &str| match v {
            "1" | "true" | "yes" => Some(true),
            "0" | "false" | "no" => Some(false),
            _ => None,
        };
        if let Some(seen) = var("BRAID_STATE_SEEN", "1 or 0 (true or false)", yes_or_no) {
            self.state_seen = seen;
        }
        self
    }
}

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// `i/n` with 1 <= i <= n.
    pub fn parse(text: &str) -> Option<Shard> {
        let (i, n) = text.split_once('/')?;
        let (index, count) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
        (1 <= index && index <= count).then_some(Shard { index, count })
    }

    /// How many of run indices 0..runs fall to this shard (i-1, i-1+n, ...).
    pub fn share(self, runs: u64) -> u64 {
        sim::explore::shard_runs(self.index, self.count, runs)
    }

    /// The budget of the whole search, before it was split: none for a time budget or an
    /// exhaustive DFS.
    fn whole_budget(settings: &Settings) -> Option<u64> {
        sim::explore::budget_runs(settings.runs, settings.time, settings.strategy)
    }

    /// The explorer restricted to this shard, with its share of the budget.
    pub fn restrict<'a>(self, explorer: Explorer<'a>, settings: &Settings) -> Explorer<'a> {
        let explorer = explorer.first_run(self.index - 1).stride(self.count);
        match Self::whole_budget(settings) {
            Some(runs) => explorer.runs(self.share(runs).max(1)),
            None => explorer,
        }
    }

    pub(crate) fn info(self, settings: &Settings) -> ShardInfo {
        ShardInfo {
            index: self.index,
            count: self.count,
            budget_runs: Self::whole_budget(settings),
        }
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
        ("pos", None) => StrategyKind::Pos,
        ("pct", depth) => StrategyKind::Pct {
            depth: depth.unwrap_or(3).max(1),
        },
        ("dfs", bound) => StrategyKind::dfs(bound),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_strategy;
    use sim::strategy::StrategyKind;

    #[test]
    fn braid_strategy_names_every_strategy() {
        assert_eq!(parse_strategy("default"), Some(StrategyKind::Default));
        assert_eq!(parse_strategy("random"), Some(StrategyKind::Random));
        assert_eq!(parse_strategy("portfolio"), Some(StrategyKind::Portfolio));
        assert_eq!(parse_strategy("pos"), Some(StrategyKind::Pos));
        assert_eq!(
            parse_strategy("pct:5"),
            Some(StrategyKind::Pct { depth: 5 })
        );
        assert_eq!(parse_strategy("dfs:2"), Some(StrategyKind::dfs(Some(2))));
        assert_eq!(parse_strategy("pos:2"), None);
        assert_eq!(parse_strategy("bfs"), None);
    }
}
