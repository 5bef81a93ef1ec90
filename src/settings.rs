//! A check's settings, from the builder and then the environment, as proptest and madsim users
//! expect: `BRAID_SEED`, `BRAID_RUNS`, `BRAID_TIME` (seconds), `BRAID_REPLAY` (a replay file),
//! `BRAID_OUT` (where failures' replay files go), `BRAID_STRATEGY` (`default`, `random`,
//! `pct` or `pct:<depth>`, `portfolio`, `dfs` or `dfs:<preemption bound>`), and `BRAID_REPORT`
//! (a directory where each check writes its outcome as JSON, for `braid explore --test`).

use std::path::PathBuf;
use std::time::Duration;

use sim::strategy::StrategyKind;

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
        }
    }
}

/// A year of seconds: the longest time budget taken.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

impl Settings {
    /// The settings with the environment's overrides. A malformed value panics, naming the
    /// variable: a test must not quietly run with a budget other than the one asked for.
    pub fn with_env(mut self) -> Self {
        if let Some(seed) = var("BRAID_SEED", "a whole number", |v| v.parse().ok()) {
            self.seed = seed;
        }
        if let Some(runs) = var("BRAID_RUNS", "a whole number of at least 1", |v| {
            v.parse().ok().filter(|&r: &u64| r > 0)
        }) {
            self.runs = Some(runs);
        }
        if let Some(time) = var(
            "BRAID_TIME",
            "seconds, more than 0 and at most a year",
            |v| {
                v.parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= MAX_SECONDS)
                    .map(Duration::from_secs_f64)
                    .filter(|t| !t.is_zero())
            },
        ) {
            self.time = Some(time);
        }
        if let Some(file) = var("BRAID_REPLAY", "a path", |v| Some(PathBuf::from(v))) {
            self.replay = Some(file);
        }
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
        self
    }
}

fn var<T>(name: &str, expected: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
    match parse(&value) {
        Some(v) => Some(v),
        None => panic!("braid: {name}={value} is not valid: expected {expected}"),
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
