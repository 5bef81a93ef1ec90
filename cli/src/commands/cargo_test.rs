//! `braid test`, `braid explore --test FILTER` and `braid replay` of a test's replay file: a
//! user's braid tests (`#[tokio::test]` on braid-tokio, `#[braid::test]`) run where they live,
//! under `cargo test`, with this command's settings passed through the `BRAID_*` variables;
//! each test reports its outcome as JSON into a directory (`BRAID_REPORT`) that this command
//! reads back.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use sim::replay_file::ReplayFile;
use sim::summary_file::SHARD_SUFFIX;

use crate::cli::{ExploreArgs, Format, PreemptionBound, ReplayArgs, StrategyArg, TestArgs};
use crate::report::ScenarioReport;
use crate::Exit;

/// The `model` a `#[braid::test]`'s replay file names.
pub const TEST_MODEL: &str = "test";

/// What one test's check reported (see the library's `outcome_file`).
#[derive(Deserialize)]
struct TestOutcome {
    test: String,
    outcome: String,
    coverage: Option<String>,
    runs: Option<u64>,
    invariant: Option<String>,
    message: Option<String>,
    source: Option<String>,
    file: Option<String>,
    rerun: Option<String>,
    /// A failure's run, from the trace file beside the outcome (for the pictures).
    #[serde(skip)]
    trace: Option<sim::trace::Trace>,
}

/// `braid test`: `cargo test` with `--cfg madsim` in `<target>/braid`, the settings through
/// the `BRAID_*` variables; one line per braid test and a total.
pub fn test(args: &TestArgs) -> Result<Exit> {
    let (mut cargo, target) = braid_cargo(None, None)?;
    // Every test binary runs, so that every braid test gets its line.
    let harness = args.cargo_args.iter().position(|a| a == "--");
    let ours = &args.cargo_args[..harness.unwrap_or(args.cargo_args.len())];
    if !ours.iter().any(|a| a == "--no-fail-fast") {
        cargo.arg("--no-fail-fast");
    }
    cargo.args(&args.cargo_args);
    if let Some(runs) = args.runs {
        cargo.env("BRAID_RUNS", runs.to_string());
    }
    if let Some(time) = args.time {
        cargo.env("BRAID_TIME", time.to_string());
    }
    if let Some(seed) = args.seed {
        cargo.env("BRAID_SEED", seed.to_string());
    }
    if let Some(strategy) = args.strategy {
        cargo.env(
            "BRAID_STRATEGY",
            strategy_value(strategy, args.depth, args.preemption_bound),
        );
    }
    if let Some(out) = &args.out {
        cargo.env("BRAID_OUT", absolute(out)?);
    }
    if let Some(shard) = args.shard {
        cargo.env("BRAID_SHARD", format!("{}/{}", shard.index, shard.count));
    }
    if args.state_seen {
        cargo.env("BRAID_STATE_SEEN", "1");
    }
    eprintln!(
        "braid test: cargo test{}{} with --cfg madsim, built in {}",
        if args.cargo_args.is_empty() { "" } else { " " },
        args.cargo_args.join(" "),
        target.display()
    );
    let Reported {
        outcomes,
        shards,
        passed,
    } = run_reporting(cargo)?;
    // With --format json, stdout is the one document; the table goes to stderr.
    let say = |line: &str| match args.format {
        Format::Text => println!("{line}"),
        Format::Json => eprintln!("{line}"),
    };
    if args.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&shards)?);
    }
    if outcomes.is_empty() {
        say(
            "braid test: no braid test ran. Name braid-tokio as tokio in Cargo.toml \
             (tokio = { package = \"braid-tokio\", ... }) so that #[tokio::test]s run under braid, \
             or write #[braid::test]s; check the filter.",
        );
        return Ok(Exit::Violation);
    }
    say("");
    let mut counts = [0usize; 3];
    for o in &outcomes {
        counts[match o.outcome.as_str() {
            "holds" => 0,
            "failed" => 1,
            _ => 2,
        }] += 1;
        say(&describe(o));
    }
    let [held, failed, other] = counts;
    let mut total = format!(
        "braid test: {} braid test{}: {held} held, {failed} failed",
        outcomes.len(),
        if outcomes.len() == 1 { "" } else { "s" }
    );
    if other > 0 {
        total += &format!(", {other} proved nothing");
    }
    if !passed && failed + other == 0 {
        total += "; cargo test failed (above)";
    }
    say(&total);
    if let (Some(shard), Format::Text) = (args.shard, args.format) {
        println!(
            "braid test: shard {}/{}: {} test summar{} (each test's <out>/shards/*.json; \
             `--format json` prints them as one document); join the shards with `braid merge`",
            shard.index,
            shard.count,
            shards.len(),
            if shards.len() == 1 { "y" } else { "ies" }
        );
    }
    Ok(if failed + other == 0 && passed {
        Exit::Clean
    } else {
        Exit::Violation
    })
}

/// `BRAID_STRATEGY`'s value for a strategy and its parameter.
fn strategy_value(
    strategy: StrategyArg,
    depth: Option<usize>,
    bound: Option<PreemptionBound>,
) -> String {
    match strategy {
        StrategyArg::Default => "default".to_string(),
        StrategyArg::Random => "random".to_string(),
        StrategyArg::Portfolio => "portfolio".to_string(),
        StrategyArg::Pos => "pos".to_string(),
        StrategyArg::Pct => format!("pct:{}", depth.unwrap_or(3)),
        StrategyArg::Dfs => bound
            .and_then(|b| b.0)
            .map_or("dfs".to_string(), |b| format!("dfs:{b}")),
    }
}

/// The target directory of the crate here (`cargo metadata`: `CARGO_TARGET_DIR`, the
/// config's, or the workspace's `target/`).
fn target_directory() -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed: run braid test in a crate (a directory with a Cargo.toml)");
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("reading cargo metadata's output")?;
    let dir = meta["target_directory"]
        .as_str()
        .context("cargo metadata gave no target_directory")?;
    Ok(PathBuf::from(dir))
}

/// Runs `cargo test FILTER` with the budget of `args`; 0 if every test held, 1 if one did not.
pub fn explore(args: &ExploreArgs, filter: &str) -> Result<Exit> {
    let budget = &args.budget;
    let (mut cargo, _) = braid_cargo(args.package.as_deref(), None)?;
    cargo.arg(filter);
    if let Some(runs) = budget.runs {
        cargo.env("BRAID_RUNS", runs.to_string());
    }
    if let Some(time) = budget.time {
        cargo.env("BRAID_TIME", time.to_string());
    }
    if let Some(seed) = budget.seed {
        cargo.env("BRAID_SEED", seed.to_string());
    }
    if let Some(strategy) = budget.strategy {
        let value = strategy_value(strategy, budget.depth, budget.preemption_bound);
        cargo.env("BRAID_STRATEGY", value);
    }
    cargo.env("BRAID_OUT", absolute(&args.out)?);
    let outcomes = run_reporting(cargo)?.outcomes;
    if outcomes.is_empty() {
        bail!("no #[braid::test] matched `{filter}`");
    }
    let mut clean = true;
    for o in &outcomes {
        clean &= o.outcome == "holds";
        println!("{}", describe(o));
    }
    Ok(if clean { Exit::Clean } else { Exit::Violation })
}

/// Replays a test's replay file under `cargo test`: 0 if it failed again exactly as recorded,
/// 1 if it no longer fails; a drifted file is bad input (2), as for a model's replay file.
pub fn replay(file: &ReplayFile, args: &ReplayArgs) -> Result<Exit> {
    let path = args.file.as_path();
    let param = |key: &str| file.params.get(key).and_then(|v| v.as_str()).unwrap_or("");
    let (package, krate) = (param("package"), param("crate"));
    if package.is_empty() {
        bail!(
            "{}: a test's replay file without its package",
            path.display()
        );
    }
    let target = (krate != package.replace('-', "_") && !krate.is_empty()).then_some(krate);
    let (mut cargo, _) = braid_cargo(Some(package), target)?;
    let name = file
        .scenario
        .split_once("::")
        .map_or(file.scenario.as_str(), |(_, n)| n);
    cargo.args(["--", name, "--exact", "--nocapture"]);
    cargo.env("BRAID_REPLAY", absolute(path)?);
    let outcomes = run_reporting(cargo)?.outcomes;
    let Some(o) = outcomes.iter().find(|o| o.test == file.scenario) else {
        bail!("{}: test {} did not run", path.display(), file.scenario);
    };
    println!("{}", describe(o));
    if o.outcome == "drifted" {
        bail!("{}", o.message.as_deref().unwrap_or("drifted"));
    }
    super::replay::draw_test(args, file, o.trace.as_ref())?;
    match (o.outcome.as_str(), o.source.as_deref()) {
        ("failed", Some("replay")) => Ok(Exit::Clean),
        _ => Ok(Exit::Violation),
    }
}

/// `cargo test` as every braid command runs a user's tests: with `--cfg madsim` (added to
/// `RUSTFLAGS`), built in `<target>/braid` so the ordinary build's cache is untouched; for
/// `package` and its test target `target`. Returns the command and that directory.
fn braid_cargo(package: Option<&str>, target: Option<&str>) -> Result<(Command, PathBuf)> {
    let dir = target_directory()?.join("braid");
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.arg("test");
    if let Some(p) = package {
        cargo.args(["-p", p]);
    }
    if let Some(t) = target {
        cargo.args(["--test", t]);
    }
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if !flags
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w == ["--cfg", "madsim"])
    {
        flags = format!("{flags} --cfg madsim").trim().to_string();
    }
    cargo.env("RUSTFLAGS", flags);
    cargo.env("CARGO_TARGET_DIR", &dir);
    Ok((cargo, dir))
}

/// What the tests under `cargo test` reported.
struct Reported {
    outcomes: Vec<TestOutcome>,
    /// Each test's summary of its shard (`BRAID_SHARD`), in test order.
    shards: Vec<ScenarioReport>,
    /// Whether cargo passed.
    passed: bool,
}

/// Runs `cargo` with a fresh report directory and reads back what each test reported.
fn run_reporting(mut cargo: Command) -> Result<Reported> {
    let dir = std::env::temp_dir().join(format!("braid-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    cargo.env("BRAID_REPORT", &dir);
    let status = cargo.status().context("running cargo test")?;
    let mut outcomes = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    files.sort();
    // `<test>.json` is a test's outcome, `<test>.trace.json` a failure's run beside it, and
    // `<test>.shard.json` its shard's summary.
    files.retain(|f| !f.to_string_lossy().ends_with(sim::trace::FILE_SUFFIX));
    let (shard_files, files): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .partition(|f| f.to_string_lossy().ends_with(SHARD_SUFFIX));
    let mut shards = Vec::new();
    for f in shard_files {
        let text = std::fs::read_to_string(&f)?;
        let parts: Vec<ScenarioReport> =
            serde_json::from_str(&text).with_context(|| format!("reading {}", f.display()))?;
        shards.extend(parts);
    }
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        let mut outcome = serde_json::from_str::<TestOutcome>(&text)
            .with_context(|| format!("reading {}", f.display()))?;
        let name = f.to_string_lossy();
        let trace_file = PathBuf::from(format!(
            "{}{}",
            name.strip_suffix(".json").unwrap_or(&name),
            sim::trace::FILE_SUFFIX
        ));
        if trace_file.exists() {
            let text = std::fs::read_to_string(&trace_file)?;
            outcome.trace = Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("reading {}", trace_file.display()))?,
            );
        }
        outcomes.push(outcome);
    }
    let _ = std::fs::remove_dir_all(&dir);
    if outcomes.is_empty() && !status.success() {
        bail!("cargo test failed before any #[braid::test] ran ({status})");
    }
    Ok(Reported {
        outcomes,
        shards,
        passed: status.success(),
    })
}

fn describe(o: &TestOutcome) -> String {
    match o.outcome.as_str() {
        "holds" => format!(
            "{}: holds ({} run{}: {})",
            o.test,
            o.runs.unwrap_or(0),
            if o.runs == Some(1) { "" } else { "s" },
            o.coverage.as_deref().unwrap_or("")
        ),
        "failed" => format!(
            "{}: FAILED{} {}: {}{}",
            o.test,
            match o.source.as_deref() {
                Some("replay") => " again on the replayed schedule;",
                Some("regression") => " again on a committed regression file;",
                _ => "",
            },
            o.invariant.as_deref().unwrap_or("?"),
            o.message.as_deref().unwrap_or(""),
            o.file
                .as_deref()
                .map(|f| format!("\n  replay file: {f}"))
                .unwrap_or_default()
                + &o.rerun
                    .as_deref()
                    .map(|r| format!("\n  rerun: {r}"))
                    .unwrap_or_default()
        ),
        other => format!(
            "{}: {}: {}",
            o.test,
            other.to_uppercase(),
            o.message.as_deref().unwrap_or("")
        ),
    }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))
}
