//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "braid",
    version,
    about = "Deterministic concurrency simulation: explore, replay and explain message-delivery races",
    after_help = "Exit codes: explore, mutants, ci: 0 every outcome as expected, 1 an outcome not as \
                  expected; replay: 0 the recorded violation reproduced exactly, 1 it did not; \
                  shrink: 0 once the file is rewritten; 2 bad input (a malformed scenario or replay \
                  file, an unknown name, a drifted model)."
)]
pub struct Cli {
    /// Directory holding the scenario files (default: `scenarios/` here, else the braid
    /// repository's this binary was built from).
    #[arg(long = "scenario-dir", global = true, value_name = "DIR")]
    pub scenario_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// The braid repository this binary was built from (scenarios/ and seeds/ are there).
fn repository() -> PathBuf {
    let cli_package = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    cli_package.parent().unwrap_or(cli_package).to_path_buf()
}

/// A corpus directory left at its default name (`seeds`): the one here if there is one, else
/// the repository's, so that `braid list seeds` and `braid ci` run from anywhere too.
pub fn default_dir(given: &std::path::Path, default: &str) -> PathBuf {
    if given == std::path::Path::new(default) && !given.is_dir() {
        let theirs = repository().join(default);
        if theirs.is_dir() {
            return theirs;
        }
    }
    given.to_path_buf()
}

impl Cli {
    /// The scenario directory: the one given, else `scenarios/` in the current directory,
    /// else the repository's (where this binary was built from), so that scenario commands
    /// run from anywhere. When none is there, the error says where it looked.
    pub fn scenario_dir(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.scenario_dir {
            return Ok(dir.clone());
        }
        let here = PathBuf::from("scenarios");
        if here.is_dir() {
            return Ok(here);
        }
        let repository = repository().join("scenarios");
        if repository.is_dir() {
            return Ok(repository);
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        anyhow::bail!(
            "no scenarios: looked in {} and in {} (the braid repository this binary was built \
             from); run braid from a braid checkout or pass --scenario-dir DIR",
            cwd.join("scenarios").display(),
            repository.display()
        )
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// List scenarios, models and variants (`braid list seeds`: the replay-file corpus).
    List(ListArgs),
    /// Explore scenarios' interleavings and report violations.
    Explore(ExploreArgs),
    /// Re-run a replay file, print its trace and whether the violation reproduces.
    Replay(ReplayArgs),
    /// Knock out each guard of the fixed variants, one at a time, and check exploration catches it.
    Mutants(MutantsArgs),
    /// The pull-request gate: replay seeds/, explore every scenario against its expectation,
    /// run the mutants, check determinism.
    Ci(CiArgs),
    /// Combine the JSON summaries of shards into one.
    Merge(MergeArgs),
    /// Minimise a replay file's schedule (fewest preemptions that still fail), in place.
    Shrink(ShrinkArgs),
    /// Run a crate's tests under braid: `cargo test` built with `--cfg madsim` in a target
    /// directory of its own, each braid test (a `#[tokio::test]` on braid-tokio, a
    /// `#[braid::test]`) explored with these settings, then one line per braid test and a total.
    Test(TestArgs),
    /// Print a shell completion script (e.g. `braid completions bash > ~/.local/share/bash-completion/completions/braid`).
    Completions(CompletionsArgs),
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// What to list (default: scenarios, then models and their variants).
    #[arg(value_enum)]
    pub what: Option<ListWhat>,
    /// The replay-file corpus `braid list seeds` lists (default: seeds/ here, else the
    /// repository's).
    #[arg(long, default_value = "seeds")]
    pub seeds: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    Scenarios,
    Seeds,
}

#[derive(clap::Args)]
pub struct CompletionsArgs {
    pub shell: clap_complete::Shell,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    /// The default plan: a bounded exhaustive search first, then the portfolio.
    Default,
    Random,
    Pct,
    Portfolio,
    /// Partial order sampling (Yuan et al., CAV 2018).
    Pos,
    Dfs,
}

impl From<StrategyArg> for sim::scenario::StrategyName {
    fn from(s: StrategyArg) -> Self {
        use sim::scenario::StrategyName;
        match s {
            StrategyArg::Default => StrategyName::Default,
            StrategyArg::Random => StrategyName::Random,
            StrategyArg::Pct => StrategyName::Pct,
            StrategyArg::Portfolio => StrategyName::Portfolio,
            StrategyArg::Pos => StrategyName::Pos,
            StrategyArg::Dfs => StrategyName::Dfs,
        }
    }
}

/// How each scenario is explored (defaults: the scenario file's `[explore]`).
#[derive(clap::Args)]
pub struct BudgetArgs {
    /// Scheduling strategy (default: the scenario's).
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// PCT depth: bugs needing up to depth-1 preemptions (default: the scenario's).
    #[arg(long)]
    pub depth: Option<usize>,
    /// DFS: at most this many preemptions per schedule, or `none` (default: the scenario's
    /// bound).
    #[arg(long)]
    pub preemption_bound: Option<PreemptionBound>,
    /// DFS: how to skip schedules equivalent to explored ones: `partial-order` (sleep sets +
    /// source-set DPOR; under a bound, visited states instead), `visited-states`, or `none`
    /// (default: visited states under a bound or on a state-visible model, else partial-order).
    #[arg(long, conflicts_with = "no_reduction")]
    pub reduction: Option<sim::strategy::Reduction>,
    /// DFS: plain depth-first search (`--reduction none`).
    #[arg(long)]
    pub no_reduction: bool,
    /// Exploration seed: a number, or `random` (the drawn seed is printed on stderr). Default:
    /// each scenario's own.
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Run budget per scenario (default: the scenario's); at least 1.
    #[arg(long, value_parser = parse_runs)]
    pub runs: Option<u64>,
    /// Time budget per scenario, in seconds (more than 0, at most a year); checked after
    /// every run.
    #[arg(long, value_parser = parse_seconds)]
    pub time: Option<f64>,
    /// Re-run a sample of schedules (and every first failure) and fail on any trace difference.
    #[arg(long)]
    pub check_determinism: bool,
    /// DFS: after a reduced search, re-explore a seeded sample of the branches its reduction
    /// pruned by plain DFS, and fail if any reaches an end state or violation the reduced search
    /// did not (a model that breaks what it declares, or an unsound reduction).
    #[arg(long)]
    pub audit_reduction: bool,
    /// Write failing schedules as found, without minimising them.
    #[arg(long)]
    pub no_shrink: bool,
    #[command(flatten)]
    pub shrink: ShrinkBudget,
    /// Parallel exploration threads (default: the machine's cores). Random/PCT: the same
    /// failing runs as one job's for the same seed and runs; DFS: job j of n explores every
    /// n-th subtree of one search from its j-th, with the same violations, end states and
    /// exhaustiveness, and the same report and replay files on every run.
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Explore shard i of n of each scenario's run space (random/PCT: run indices; DFS:
    /// subtrees), so a CI matrix can spread one exploration over machines; `braid merge`
    /// combines the summaries.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// DFS with no preemption bound: deepen the bound 0, 1, 2, ... before the unbounded search
    /// (default: when a budget is given). `braid ci`'s proofs turn it off: their time limit is
    /// a cap, not a budget to spend.
    #[arg(skip)]
    pub deepening: Option<bool>,
}

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// How many of run indices 0..runs fall to this shard (i-1, i-1+n, ...).
    pub fn share(self, runs: u64) -> u64 {
        sim::explore::shard_runs(self.index, self.count, runs)
    }
}

/// A run budget: a budget of nothing would explore nothing and pass.
fn parse_runs(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("a run budget must be at least 1 (0 runs would check nothing)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a number of runs")),
    }
}

/// The longest time budget: a year (`Duration` cannot hold much more than 1e19 s).
pub use sim::env_overrides::MAX_SECONDS;

/// A time budget in seconds: positive, finite, at most `MAX_SECONDS`.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let t: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(t.is_finite() && t > 0.0 && t <= MAX_SECONDS) {
        return Err(format!(
            "a time budget must be more than 0 and at most {MAX_SECONDS} s (a year), not {s}"
        ));
    }
    if std::time::Duration::from_secs_f64(t).is_zero() {
        return Err(format!("a time budget of {s} s rounds to nothing"));
    }
    Ok(t)
}

/// `--seed N|random`, the same for every command: `random` draws a seed outside any simulation
/// and says which on stderr, so the run can be repeated.
fn parse_seed(s: &str) -> Result<u64, String> {
    if s == "random" {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(std::process::id().into());
        let drawn = h.finish() % 1_000_000_000;
        eprintln!("braid: --seed random drew seed {drawn} (rerun with --seed {drawn})");
        return Ok(drawn);
    }
    s.parse()
        .map_err(|_| format!("'{s}' is not a seed: a number, or `random`"))
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("--jobs must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a number of jobs")),
    }
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("shard '{s}' is not i/n"))?;
    let index: u64 = i.parse().map_err(|_| format!("shard '{s}' is not i/n"))?;
    let count: u64 = n.parse().map_err(|_| format!("shard '{s}' is not i/n"))?;
    if count == 0 || index == 0 || index > count {
        return Err(format!("shard '{s}': need 1 <= i <= n"));
    }
    Ok(Shard { index, count })
}

#[derive(clap::Args)]
pub struct ExploreArgs {
    /// Scenario names (or paths to .toml files), or `all`.
    #[arg(required_unless_present = "test")]
    pub scenarios: Vec<String>,
    /// Explore your own `#[braid::test]`s instead: runs `cargo test FILTER` with this command's
    /// budget, strategy, seed and --out passed through the BRAID_* variables, and reports each
    /// test's outcome.
    #[arg(long, value_name = "FILTER", conflicts_with = "scenarios")]
    pub test: Option<String>,
    /// With --test: the package whose tests to run (`cargo test -p PACKAGE`).
    #[arg(long, short = 'p', requires = "test")]
    pub package: Option<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Output: `text` for people, or `json` for machines (one JSON document on stdout,
    /// carrying `"format": 1`; README, "JSON outputs").
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Where replay files are written. New files go under target/braid; promote one into the
    /// committed corpus with `--out seeds` (then `braid ci` replays it on every run).
    #[arg(long, default_value = "target/braid")]
    pub out: PathBuf,
}

#[derive(clap::Args)]
#[command(
    after_help = "Run from the crate (or workspace) whose tests to run. cargo test is built \
                  with RUSTFLAGS=\"$RUSTFLAGS --cfg madsim\" (RUSTFLAGS replaces a config's \
                  build.rustflags: put those in RUSTFLAGS too) and CARGO_TARGET_DIR=<the crate's \
                  target directory>/braid, so the ordinary build's cache is untouched. The \
                  settings reach each test through BRAID_RUNS, BRAID_SEED, BRAID_STRATEGY, \
                  BRAID_TIME and BRAID_OUT; BRAID_REPLAY=<replay file> in the environment replays \
                  one failure (see its printed rerun command). Exit 0: every braid test held and \
                  cargo test passed; 1: a test failed or proved nothing, or no braid test ran; \
                  2: cargo test failed before any braid test ran."
)]
pub struct TestArgs {
    /// Runs per test, at least 1 (default: each test's own, 10,000 unless it says).
    #[arg(long, value_parser = parse_runs)]
    pub runs: Option<u64>,
    /// Time budget per test, in seconds.
    #[arg(long, value_parser = parse_seconds)]
    pub time: Option<f64>,
    /// Exploration seed: a number, or `random` (the drawn seed is printed on stderr).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Scheduling strategy (default: each test's own, the default plan unless it says).
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// PCT depth (with --strategy pct; default 3).
    #[arg(long)]
    pub depth: Option<usize>,
    /// DFS: at most this many preemptions per schedule, or `none` (with --strategy dfs).
    #[arg(long)]
    pub preemption_bound: Option<PreemptionBound>,
    /// Where failures' replay files go (default: `braid/` in the braid build's target
    /// directory, i.e. target/braid/braid/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Search shard i of n of each test's runs (random/PCT: run indices; DFS: subtrees), so a
    /// CI matrix can spread a test over machines: each test writes its shard's summary to
    /// `<out>/shards/`, and `braid merge` joins the shards (`BRAID_SHARD=i/n` does the same
    /// under plain `cargo test`).
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Output: `text` for people, or `json`: the tests' shard summaries as one document on
    /// stdout, for `braid merge` (with `--shard`; the table goes to stderr).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Every state the tests' tasks share goes through braid (tokio's types through the
    /// drop-in, std's locks and atomics through a `cfg(madsim)` alias of `braid::std::sync`):
    /// search `#[tokio::test]`s with reduction (`BRAID_STATE_SEEN=1`). A sample of what it
    /// prunes is audited, and a test found to share state braid does not see is reported.
    #[arg(long)]
    pub state_seen: bool,
    /// `cargo test`'s own arguments, after `--`: `-p PACKAGE`, `--test NAME`, a filter, and
    /// after a second `--` the test binary's (`--exact`, `--nocapture`, `--skip`).
    #[arg(last = true, value_name = "CARGO TEST ARGS")]
    pub cargo_args: Vec<String>,
}

#[derive(clap::Args)]
pub struct MutantsArgs {
    /// Scenario names (or paths to .toml files), or `all`: each guard of each scenario's
    /// variant is knocked out in turn.
    #[arg(required = true)]
    pub scenarios: Vec<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Output: `text` for people, or `json` for machines (one JSON document on stdout,
    /// carrying `"format": 1`; README, "JSON outputs").
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Where the replay files of caught mutants are written.
    #[arg(long, default_value = "target/braid/mutants")]
    pub out: PathBuf,
}

#[derive(clap::Args)]
pub struct ShrinkArgs {
    /// The replay file to minimise (rewritten atomically).
    pub file: PathBuf,
    #[command(flatten)]
    pub shrink: ShrinkBudget,
}

/// How hard shrinking searches below a 1-minimal preemption count (bounded DFS at count - 1,
/// then lower; an exhaustive search that finds nothing proves the count minimum).
#[derive(clap::Args, Clone, Copy, Default)]
pub struct ShrinkBudget {
    /// Shrinking: DFS runs for the searches below the 1-minimal count, 0 for none (default
    /// 2000). A run budget, so that a replay file does not depend on the machine's speed.
    #[arg(long)]
    pub shrink_runs: Option<u64>,
    /// Shrinking: wall-time cap on those searches, in seconds (default 30); a safety net for
    /// slow models, which makes the result depend on the machine when it cuts a search.
    #[arg(long)]
    pub shrink_time: Option<f64>,
}

impl ShrinkBudget {
    pub fn options(&self) -> Result<sim::shrink::ShrinkOptions, String> {
        let defaults = sim::shrink::ShrinkOptions::default();
        let time = match self.shrink_time {
            Some(t) if !(t.is_finite() && t >= 0.0) => {
                return Err("--shrink-time must be a number of seconds".into())
            }
            Some(t) => std::time::Duration::from_secs_f64(t),
            None => defaults.time,
        };
        Ok(sim::shrink::ShrinkOptions {
            runs: self.shrink_runs.unwrap_or(defaults.runs),
            time,
        })
    }
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The replay file.
    pub file: PathBuf,
    /// Output: `text` for people, or `json` for machines (one JSON document on stdout,
    /// carrying `"format": 1`; README, "JSON outputs").
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write a swimlane picture of the run as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also write an HTML page with the swimlane picture and the trace.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print a Mermaid sequence diagram (for a pull request comment) instead of the text trace.
    #[arg(long)]
    pub mermaid: bool,
    /// With --mermaid: the compact form, tasks and model events only (no lane per lock,
    /// channel or atomic), readable at a comment's width.
    #[arg(long, requires = "mermaid")]
    pub compact: bool,
}

#[derive(clap::Args)]
pub struct CiArgs {
    /// Run budget per scenario (default: each scenario's own); at least 1.
    #[arg(long, value_parser = parse_runs)]
    pub runs: Option<u64>,
    /// Time budget per scenario and per mutant, in seconds (more than 0, at most a year);
    /// checked after every run.
    #[arg(long, value_parser = parse_seconds)]
    pub time: Option<f64>,
    /// Strategy for every scenario (default: each scenario's own).
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// PCT depth (default: each scenario's own).
    #[arg(long)]
    pub depth: Option<usize>,
    /// Exploration seed: a number, or `random` (the drawn seed is printed on stderr). Default:
    /// each scenario's own, so CI is reproducible.
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// This machine's shard i of n (scenario run indices and mutants are split; seeds are
    /// replayed on shard 1).
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Output: `text` for people, or `json` for machines (one JSON document on stdout,
    /// carrying `"format": 1`; README, "JSON outputs").
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write JUnit XML: one test case per seed file, scenario, mutant and proof; a failure
    /// carries its message, the replay command and a new violation's Mermaid diagram.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the result as Markdown (counts, failures, each new violation's replay command
    /// and Mermaid diagram), e.g. to append to $GITHUB_STEP_SUMMARY.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Where replay files of new violations (and caught mutants) are written.
    #[arg(long, default_value = "target/braid/ci")]
    pub out: PathBuf,
    /// The replay-file corpus to re-run first (default: seeds/ here, else the repository's).
    #[arg(long, default_value = "seeds")]
    pub seeds: PathBuf,
    #[command(flatten)]
    pub shrink: ShrinkBudget,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// `braid explore ... --shard i/n --format json` outputs, one per shard.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output: `text` for people, or `json` for machines (one JSON document on stdout,
    /// carrying `"format": 1`; README, "JSON outputs").
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// `--preemption-bound N|none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreemptionBound(pub Option<usize>);

impl std::str::FromStr for PreemptionBound {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(PreemptionBound(None)),
            n => n
                .parse()
                .map(|b| PreemptionBound(Some(b)))
                .map_err(|_| format!("expected a number of preemptions or `none`, got `{n}`")),
        }
    }
}
