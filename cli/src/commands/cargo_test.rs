//! `braid explore --test FILTER` and `braid replay` of a test's replay file: a user's
//! `#[braid::test]`s run where they live, under `cargo test`, with this command's settings
//! passed through the `BRAID_*` variables; each test reports its outcome as JSON into a
//! directory (`BRAID_REPORT`) that this command reads back.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use sim::replay_file::ReplayFile;

use crate::cli::{ExploreArgs, StrategyArg};
use crate::Verdict;

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
}

/// Runs `cargo test FILTER` with the budget of `args`; 0 if every test held, 1 if one did not.
pub fn explore(args: &ExploreArgs, filter: &str) -> Result<Verdict> {
    let budget = &args.budget;
    let mut cargo = cargo_test(args.package.as_deref(), None);
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
        let bound = budget.preemption_bound.and_then(|b| b.0);
        let value = match strategy {
            StrategyArg::Default => "default".to_string(),
            StrategyArg::Random => "random".to_string(),
            StrategyArg::Portfolio => "portfolio".to_string(),
            StrategyArg::Pct => format!("pct:{}", budget.depth.unwrap_or(3)),
            StrategyArg::Dfs => bound.map_or("dfs".to_string(), |b| format!("dfs:{b}")),
        };
        cargo.env("BRAID_STRATEGY", value);
    }
    cargo.env("BRAID_OUT", absolute(&args.out)?);
    let outcomes = run_reporting(cargo)?;
    if outcomes.is_empty() {
        bail!("no #[braid::test] matched `{filter}`");
    }
    let mut clean = true;
    for o in &outcomes {
        clean &= o.outcome == "holds";
        println!("{}", describe(o));
    }
    Ok(if clean {
        Verdict::Clean
    } else {
        Verdict::Violation
    })
}

/// Replays a test's replay file under `cargo test`: 0 if it failed again exactly as recorded,
/// 1 if it no longer fails; a drifted file is bad input (2), as for a model's replay file.
pub fn replay(file: &ReplayFile, path: &Path) -> Result<Verdict> {
    let param = |key: &str| file.params.get(key).and_then(|v| v.as_str()).unwrap_or("");
    let (package, krate) = (param("package"), param("crate"));
    if package.is_empty() {
        bail!(
            "{}: a test's replay file without its package",
            path.display()
        );
    }
    let target = (krate != package.replace('-', "_") && !krate.is_empty()).then_some(krate);
    let mut cargo = cargo_test(Some(package), target);
    let name = file
        .scenario
        .split_once("::")
        .map_or(file.scenario.as_str(), |(_, n)| n);
    cargo.args(["--", name, "--exact", "--nocapture"]);
    cargo.env("BRAID_REPLAY", absolute(path)?);
    let outcomes = run_reporting(cargo)?;
    let Some(o) = outcomes.iter().find(|o| o.test == file.scenario) else {
        bail!("{}: test {} did not run", path.display(), file.scenario);
    };
    println!("{}", describe(o));
    match (o.outcome.as_str(), o.source.as_deref()) {
        ("failed", Some("replay")) => Ok(Verdict::Clean),
        ("drifted", _) => bail!("{}", o.message.as_deref().unwrap_or("drifted")),
        _ => Ok(Verdict::Violation),
    }
}

fn cargo_test(package: Option<&str>, target: Option<&str>) -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.arg("test");
    if let Some(p) = package {
        cargo.args(["-p", p]);
    }
    if let Some(t) = target {
        cargo.args(["--test", t]);
    }
    cargo
}

/// Runs `cargo` with a fresh report directory and reads back what each test reported.
fn run_reporting(mut cargo: Command) -> Result<Vec<TestOutcome>> {
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
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        outcomes.push(
            serde_json::from_str::<TestOutcome>(&text)
                .with_context(|| format!("reading {}", f.display()))?,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    if outcomes.is_empty() && !status.success() {
        bail!("cargo test failed before any #[braid::test] ran ({status})");
    }
    Ok(outcomes)
}

fn describe(o: &TestOutcome) -> String {
    match o.outcome.as_str() {
        "holds" => format!(
            "{}: holds ({} runs: {})",
            o.test,
            o.runs.unwrap_or(0),
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
