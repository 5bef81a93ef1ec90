//! Scenario files (scenarios/<name>.toml): which model and variant, its parameters, default
//! exploration, and the expected outcome. Unknown keys are errors, not silently ignored.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::strategy::{Reduction, StrategyKind};

/// Why a scenario could not be loaded.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{path}: cannot read scenario: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Not a `source`: the message carries it, so a report that prints the chain of
        /// causes does not print it twice.
        error: std::io::Error,
    },
    /// The file is not a valid scenario: bad TOML, an unknown key, a budget of nothing.
    #[error("{path}: malformed scenario: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// No file in the scenario directory has this name.
    #[error("no scenario named '{name}' in {dir} (try `braid list`)")]
    NotFound {
        /// The name asked for.
        name: String,
        /// The directory searched.
        dir: PathBuf,
    },
}

/// What a scenario is expected to show: `holds`, or `violation:<invariant>[,<invariant>...]` —
/// exploration must break at least one of the listed invariants and no other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Expected {
    /// No invariant breaks in any run explored.
    Holds,
    /// Some run breaks one of these invariants, and none breaks another.
    Violation(Vec<String>),
}

impl Expected {
    /// Whether exploration that broke exactly `found` (invariant names) meets the expectation.
    pub fn matches<'a>(&self, found: impl IntoIterator<Item = &'a str>) -> bool {
        let mut found = found.into_iter().peekable();
        match self {
            Expected::Holds => found.peek().is_none(),
            Expected::Violation(allowed) => {
                found.peek().is_some() && found.all(|f| allowed.iter().any(|a| a == f))
            }
        }
    }
}

impl TryFrom<String> for Expected {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "holds" => Ok(Expected::Holds),
            Some(("violation", list))
                if !list.is_empty() && list.split(',').all(|i| !i.trim().is_empty()) =>
            {
                Ok(Expected::Violation(
                    list.split(',').map(|i| i.trim().to_string()).collect(),
                ))
            }
            _ => Err(format!(
                "expected must be \"holds\" or \"violation:<invariant>[,<invariant>...]\", not \"{s}\""
            )),
        }
    }
}

impl From<Expected> for String {
    fn from(e: Expected) -> String {
        e.to_string()
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Holds => write!(f, "holds"),
            Expected::Violation(invs) => write!(f, "violation:{}", invs.join(",")),
        }
    }
}

/// Default exploration for a scenario; the command line overrides each field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExploreDefaults {
    /// The strategy's name (`default`, `random`, `pct`, `portfolio`, `dfs`).
    pub strategy: String,
    /// PCT depth (bug depth d: d-1 priority change points).
    pub depth: usize,
    /// The seed of the search's random choices.
    pub seed: u64,
    /// Run budget.
    pub runs: u64,
    /// Wall-time budget in seconds (optional).
    pub time: Option<u64>,
    /// Step bound per run.
    pub max_steps: usize,
    /// DFS: at most this many preemptions per schedule (the scenario's bound; none = all).
    pub preemption_bound: Option<usize>,
    /// Whether `braid ci` proves this scenario (when it expects `holds`) by DFS. A proof that
    /// takes minutes is left to a documented command; ci still explores it against its
    /// expectation with its budget.
    pub ci_proof: bool,
}

impl Default for ExploreDefaults {
    fn default() -> Self {
        ExploreDefaults {
            strategy: "default".into(),
            depth: 3,
            seed: 1,
            runs: 20_000,
            time: None,
            max_steps: 10_000,
            preemption_bound: None,
            ci_proof: true,
        }
    }
}

/// The deepest PCT search accepted: d-1 priority change points per run, where every bug braid
/// has found needs at most 6 (a depth of 10^8 would take minutes and gigabytes to set up).
pub const MAX_DEPTH: usize = 1_000;

/// A strategy by name, as a scenario file or the command line names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyName {
    /// The plan: iterative-bounding DFS in part of the budget, then the portfolio.
    Default,
    /// Uniformly random choice at every scheduling point.
    Random,
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random priorities with
    /// `depth - 1` change points.
    Pct,
    /// Random and PCT runs in turn.
    Portfolio,
    /// Partial order sampling (Yuan et al., CAV 2018).
    Pos,
    /// Depth-first search of every schedule (within a preemption bound, if given).
    Dfs,
}

impl std::str::FromStr for StrategyName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "default" => Ok(StrategyName::Default),
            "random" => Ok(StrategyName::Random),
            "pct" => Ok(StrategyName::Pct),
            "portfolio" => Ok(StrategyName::Portfolio),
            "pos" => Ok(StrategyName::Pos),
            "dfs" => Ok(StrategyName::Dfs),
            other => Err(format!(
                "unknown strategy '{other}' (known: default, random, pct, portfolio, pos, dfs)"
            )),
        }
    }
}

/// The strategy `name` with its settings (`state_visible`: the model's, which decides the
/// default reduction).
pub fn strategy(
    name: StrategyName,
    depth: usize,
    preemption_bound: Option<usize>,
    reduction: Option<Reduction>,
    state_visible: bool,
) -> Result<StrategyKind, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "PCT depth must be at most {MAX_DEPTH}, not {depth}"
        ));
    }
    match name {
        StrategyName::Default => Ok(StrategyKind::Default),
        StrategyName::Random => Ok(StrategyKind::Random),
        StrategyName::Pct if depth >= 1 => Ok(StrategyKind::Pct { depth }),
        StrategyName::Pct => Err("PCT depth must be at least 1".into()),
        StrategyName::Portfolio => Ok(StrategyKind::Portfolio),
        StrategyName::Pos => Ok(StrategyKind::Pos),
        StrategyName::Dfs => Ok(StrategyKind::Dfs {
            preemption_bound,
            reduction: reduction.unwrap_or(Reduction::for_search(preemption_bound, state_visible)),
        }),
    }
}

/// Parses a strategy name and its settings as given in a scenario (see [`strategy`]).
pub fn parse_strategy(
    name: &str,
    depth: usize,
    preemption_bound: Option<usize>,
    reduction: Option<Reduction>,
    state_visible: bool,
) -> Result<StrategyKind, String> {
    strategy(
        name.parse()?,
        depth,
        preemption_bound,
        reduction,
        state_visible,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    model: String,
    variant: String,
    #[serde(default)]
    description: String,
    expected: Expected,
    /// At a coarse grain: the invariant that the grain check's access-grain runs break (what
    /// the coarse grain hides), which the scenario thereby declares it knows.
    #[serde(default)]
    hides: Option<String>,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    explore: ExploreDefaults,
}

/// A loaded scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file's stem: `broker-bind-race`.
    pub name: String,
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The model it explores, by name.
    pub model: String,
    /// The model's variant (the broker's `fixed`, `racy`, ...).
    pub variant: String,
    /// What the scenario shows, in a sentence (`braid list` prints it).
    pub description: String,
    /// What exploring it must find: CI fails otherwise.
    pub expected: Expected,
    /// What the scenario's coarse grain hides (see `ScenarioFile::hides`).
    pub hides: Option<String>,
    /// The model's parameters, as a JSON object (the form replay files keep).
    pub params: serde_json::Value,
    /// Its default exploration (strategy, seed, budget); the command line overrides each.
    pub explore: ExploreDefaults,
}

impl Scenario {
    /// Reads and parses the scenario file at `path`.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|error| ScenarioError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Self::parse(path, &text)
    }

    /// Parses `text` as a scenario file (named `path` in errors): unknown keys and empty budgets
    /// are errors.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let malformed = |message: String| ScenarioError::Malformed {
            path: path.to_path_buf(),
            message,
        };
        let file: ScenarioFile = toml::from_str(text).map_err(|e| malformed(one_line(&e)))?;
        // A budget of nothing explores nothing, and would pass.
        if file.explore.runs == 0 {
            return Err(malformed("[explore] runs must be at least 1".into()));
        }
        if file.explore.time == Some(0) {
            return Err(malformed("[explore] time must be at least 1 second".into()));
        }
        parse_strategy(
            &file.explore.strategy,
            file.explore.depth,
            None,
            None,
            false,
        )
        .map_err(|m| malformed(format!("[explore] {m}")))?;
        let params = serde_json::to_value(&file.params).map_err(|e| malformed(e.to_string()))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The name becomes a directory under --out: it must stay one plain component there.
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if name.is_empty() || name.starts_with('.') || !name.chars().all(plain) {
            return Err(malformed(format!(
                "the file name makes the scenario name '{name}': use letters, digits, '-', '_' \
                 and '.', not starting with '.'"
            )));
        }
        Ok(Scenario {
            name,
            path: path.to_path_buf(),
            model: file.model,
            variant: file.variant,
            description: file.description,
            expected: file.expected,
            hides: file.hides,
            params,
            explore: file.explore,
        })
    }

    /// All scenarios in `dir`, by name.
    pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
        Self::paths_in(dir)?
            .iter()
            .map(|p| Scenario::load(p))
            .collect()
    }

    /// The scenario files in `dir` (`*.toml`), by name.
    pub fn paths_in(dir: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
        let entries = std::fs::read_dir(dir).map_err(|error| ScenarioError::Io {
            path: dir.to_path_buf(),
            error,
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        Ok(paths)
    }

    /// A scenario by name (`broker-bind-race`) from `dir`, or by path.
    pub fn find(dir: &Path, name_or_path: &str) -> Result<Scenario, ScenarioError> {
        let as_path = Path::new(name_or_path);
        if as_path.extension().is_some_and(|x| x == "toml") {
            return Scenario::load(as_path);
        }
        let path = dir.join(format!("{name_or_path}.toml"));
        if !path.exists() {
            return Err(ScenarioError::NotFound {
                name: name_or_path.to_string(),
                dir: dir.to_path_buf(),
            });
        }
        Scenario::load(&path)
    }
}

/// toml's errors span several lines with a source excerpt; keep the first line and the position.
fn one_line(e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => format!("{msg} (at byte {})", span.start),
        None => msg,
    }
}
