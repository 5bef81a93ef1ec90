//! `braid ci`: the pull-request gate. In order, and stopping nothing early:
//! (a) every replay file under seeds/ must still reproduce its recorded violation;
//! (b) every scenario is explored with its budget and checked against its expectation — a new
//!     violation is written as a shrunk replay file and printed with its replay command and a
//!     Mermaid diagram to paste into the pull request;
//! (c) every guard of every fixed variant is knocked out and must be caught;
//! (d) a sample of schedules of every scenario is re-run, and any trace difference fails;
//! (e) every fixed scenario is proved by DFS within its preemption bound: exhaustive, no
//!     violation.
//! Exit 0 only when every expectation holds; 1 when one does not; 2 on bad input.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;
use sim::render::{self, Caption};
use sim::replay_file::{check_target, write_atomic, DigestCheck, ReplayFile};
use sim::scenario::{Expected, Scenario};
use sim::strategy::Replay;
use sim::{run_once, RunConfig, RunOutcome};

use super::explore::{explore_one, strategy_for};
use super::mutants::{hunt, plan};
use crate::cli::{BudgetArgs, CiArgs, Cli, Format, StrategyArg};
use crate::junit::{self, Case};
use crate::Verdict;

#[derive(Serialize)]
struct CaseReport {
    kind: &'static str,
    name: String,
    ok: bool,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<String>,
    seconds: f64,
}

#[derive(Serialize)]
struct CiReport {
    seed: Option<u64>,
    shard: Option<String>,
    passed: usize,
    failed: usize,
    determinism_checked: u64,
    elapsed_ms: f64,
    cases: Vec<CaseReport>,
}

/// A proof that takes longer than this fails the gate (every one takes seconds today).
const PROOF_CAP_SECS: f64 = 300.0;

/// Explores every schedule of a fixed scenario within its preemption bound.
fn prove(
    scenario: &Scenario,
    model: &dyn sim::Model,
    budget: &BudgetArgs,
    out: &Path,
) -> Result<CaseReport> {
    let t = Instant::now();
    let report = explore_one(scenario, model, None, budget, out)?;
    let bound = match report.preemption_bound {
        Some(b) => format!("within {b} preemptions"),
        None => "with no preemption bound".into(),
    };
    let first = report.violations.first();
    let audit_misses = report.audit.as_ref().map_or(0, |a| a.misses.len());
    let (ok, message) = match first {
        _ if audit_misses > 0 => (
            false,
            format!(
                "reduction audit failed: {}",
                report
                    .audit
                    .as_ref()
                    .map_or(String::new(), |a| a.misses.join("; "))
            ),
        ),
        Some(v) => (false, format!("violated {} {bound}", v.invariant)),
        None if report.runs == 0 => (
            false,
            format!(
                "inconclusive {bound}: every run was cut short ({} pruned)",
                report.pruned
            ),
        ),
        None if report.exhaustive || report.proved_bound.is_some() => (
            true,
            format!(
                "proved {}: {} schedules, {} pruned",
                match report.proved_bound {
                    Some(k) if !report.exhaustive => format!("within {k} preemptions"),
                    _ => "over every schedule".to_string(),
                },
                report.runs,
                report.pruned
            ),
        ),
        None => (
            false,
            format!(
                "not exhausted {bound} in {PROOF_CAP_SECS} s ({} schedules)",
                report.runs
            ),
        ),
    };
    if let Some(v) = first {
        explain_new_violation(&scenario.name, &v.invariant, &v.message, &v.replay_file)?;
    }
    Ok(CaseReport {
        kind: "proof",
        name: scenario.name.clone(),
        ok,
        message,
        replay: first.map(|v| v.replay_file.clone()),
        seconds: t.elapsed().as_secs_f64(),
    })
}

pub fn run(cli: &Cli, args: &CiArgs) -> Result<Verdict> {
    let start = Instant::now();
    let seed = match args.seed.as_deref() {
        None => None,
        Some("random") => {
            let drawn = random_seed();
            eprintln!("braid ci: --seed random drew seed {drawn} (rerun with --seed {drawn})");
            Some(drawn)
        }
        Some(s) => Some(
            s.parse()
                .map_err(|_| anyhow::anyhow!("--seed must be a number or `random`, not '{s}'"))?,
        ),
    };
    // Bad input first, before any exploring: the JUnit path must be writable, and every seed
    // file and scenario must load and build.
    if let Some(path) = &args.junit {
        check_target(path).with_context(|| format!("writing {}", path.display()))?;
    }
    let shard_one = args.shard.is_none_or(|s| s.index == 1);
    let seed_files = if shard_one {
        load_seeds(&args.seeds)?
    } else {
        Vec::new()
    };
    let scenarios = Scenario::load_dir(&cli.scenario_dir)?;
    let mut built = Vec::new();
    for s in &scenarios {
        models::registry::check_expected(&s.model, &s.expected)
            .with_context(|| format!("scenario {}", s.path.display()))?;
        let model = models::registry::build(&s.model, &s.variant, &s.params)
            .with_context(|| format!("scenario {}", s.path.display()))?;
        built.push((s, model));
    }
    let budget = BudgetArgs {
        strategy: args.strategy,
        depth: args.depth,
        preemption_bound: None,
        reduction: None,
        no_reduction: false,
        seed,
        runs: args.runs,
        time: args.time,
        check_determinism: true,
        no_shrink: false,
        shrink: args.shrink,
        jobs: None,
        shard: args.shard,
        deepening: None,
        audit_reduction: false,
    };
    // A budget no scenario can be explored with is bad input too.
    for (s, model) in &built {
        strategy_for(s, model.as_ref(), &budget)?;
    }
    let mut cases = Vec::new();

    // (a) The regression corpus.
    for (path, file) in &seed_files {
        cases.push(replay_seed(path, file)?);
        report_progress(args, cases.last());
    }
    // (b) Every scenario against its expectation; (d) determinism is checked on the way.
    let mut determinism_checked = 0;
    let mut determinism_failures = Vec::new();
    for (scenario, model) in &built {
        let t = Instant::now();
        let case = match explore_one(scenario, model.as_ref(), None, &budget, &args.out) {
            Ok(report) => {
                determinism_checked += report.determinism_checked;
                let message = if report.matches_expectation {
                    format!("{} as expected ({} runs)", report.outcome, report.runs)
                } else {
                    let found: Vec<&str> = report
                        .violations
                        .iter()
                        .map(|v| v.invariant.as_str())
                        .collect();
                    match &scenario.expected {
                        Expected::Holds => format!("expected holds; violated {}", found.join(", ")),
                        Expected::Violation(_) if found.is_empty() => format!(
                            "expected {}; held for {} runs",
                            scenario.expected, report.runs
                        ),
                        Expected::Violation(_) => format!(
                            "expected {}; violated {}",
                            scenario.expected,
                            found.join(", ")
                        ),
                    }
                };
                let unexpected = report.violations.iter().find(|v| {
                    !scenario
                        .expected
                        .matches(std::iter::once(v.invariant.as_str()))
                });
                let replay = unexpected.map(|v| v.replay_file.clone());
                if let (false, Some(v)) = (report.matches_expectation, unexpected) {
                    explain_new_violation(
                        &scenario.name,
                        &v.invariant,
                        &v.message,
                        &v.replay_file,
                    )?;
                }
                CaseReport {
                    kind: "scenario",
                    name: scenario.name.clone(),
                    ok: report.matches_expectation,
                    message,
                    replay,
                    seconds: t.elapsed().as_secs_f64(),
                }
            }
            Err(e) => {
                let message = format!("{e:#}");
                if message.contains("nondeterminism") {
                    determinism_failures.push(scenario.name.clone());
                }
                CaseReport {
                    kind: "scenario",
                    name: scenario.name.clone(),
                    ok: false,
                    message,
                    replay: None,
                    seconds: t.elapsed().as_secs_f64(),
                }
            }
        };
        cases.push(case);
        report_progress(args, cases.last());
    }
    // (c) Mutants of every fixed variant, split across shards by index.
    let mutant_budget = BudgetArgs {
        shard: None,
        check_determinism: false,
        ..budget
    };
    for (k, (model, variant, guard, group)) in plan(&scenarios)?.into_iter().enumerate() {
        if let Some(shard) = args.shard {
            if k as u64 % shard.count != shard.index - 1 {
                continue;
            }
        }
        let t = Instant::now();
        let out = args.out.join("mutants");
        let r = hunt(&model, &variant, guard, &group, &mutant_budget, &out)?;
        let message = match (&r.caught_by, &r.violation) {
            (Some(s), Some(v)) => format!("caught by {s}: {}", v.invariant),
            _ => format!("survived: no scenario of {model}/{variant} fails without guard {guard}"),
        };
        cases.push(CaseReport {
            kind: "mutant",
            name: format!("{model}/{variant} without {guard}"),
            ok: r.caught,
            message,
            replay: r.violation.map(|v| v.replay_file),
            seconds: t.elapsed().as_secs_f64(),
        });
        report_progress(args, cases.last());
    }
    // (d) Determinism: every scenario's sampled schedules were re-run from seed and decisions.
    cases.push(CaseReport {
        kind: "determinism",
        name: "re-run schedules are identical".into(),
        ok: determinism_failures.is_empty(),
        message: if determinism_failures.is_empty() {
            format!("{determinism_checked} schedules re-run, identical traces")
        } else {
            format!(
                "trace differs on re-run: {}",
                determinism_failures.join(", ")
            )
        },
        replay: None,
        seconds: 0.0,
    });
    report_progress(args, cases.last());
    // (e) Proofs of the fixed variants, split across shards by index.
    let proof_budget = BudgetArgs {
        strategy: Some(StrategyArg::Dfs),
        runs: None,
        time: Some(PROOF_CAP_SECS),
        shard: None,
        check_determinism: false,
        deepening: Some(false),
        audit_reduction: true,
        ..budget
    };
    let fixed = built
        .iter()
        .filter(|(s, _)| s.expected == Expected::Holds && s.explore.ci_proof);
    for (k, (scenario, model)) in fixed.enumerate() {
        if let Some(shard) = args.shard {
            if k as u64 % shard.count != shard.index - 1 {
                continue;
            }
        }
        cases.push(prove(scenario, model.as_ref(), &proof_budget, &args.out)?);
        report_progress(args, cases.last());
    }

    let failed = cases.iter().filter(|c| !c.ok).count();
    let report = CiReport {
        seed,
        shard: args.shard.map(|s| format!("{}/{}", s.index, s.count)),
        passed: cases.len() - failed,
        failed,
        determinism_checked,
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        cases,
    };
    if let Some(path) = &args.junit {
        let cases: Vec<Case> = report
            .cases
            .iter()
            .map(|c| Case {
                suite: c.kind,
                name: c.name.clone(),
                seconds: c.seconds,
                failure: (!c.ok).then(|| {
                    let body = match &c.replay {
                        Some(file) => format!("{}\nreproduce: braid replay {file}", c.message),
                        None => c.message.clone(),
                    };
                    (c.message.clone(), body)
                }),
            })
            .collect();
        write_atomic(path, junit::render(&cases).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => println!(
            "\nbraid ci: {} passed, {} failed, {} schedules re-run for determinism, {:.1}s",
            report.passed,
            report.failed,
            report.determinism_checked,
            report.elapsed_ms / 1e3
        ),
    }
    Ok(if failed > 0 {
        Verdict::Violation
    } else {
        Verdict::Clean
    })
}

fn report_progress(args: &CiArgs, case: Option<&CaseReport>) {
    if let (Format::Text, Some(c)) = (args.format, case) {
        let status = if c.ok { "ok  " } else { "FAIL" };
        println!("{status} {:<12} {:<56} {}", c.kind, c.name, c.message);
        if let (false, Some(file)) = (c.ok, &c.replay) {
            println!("     reproduce: braid replay {file}");
        }
    }
}

/// Every replay file under `dir`, loaded (a corrupt one is bad input: exit 2 naming it).
fn load_seeds(dir: &Path) -> Result<Vec<(PathBuf, ReplayFile)>> {
    // A missing corpus would replay nothing and pass: that is a mistyped path, not a pass.
    if !dir.is_dir() {
        anyhow::bail!("seed corpus {} is not a directory", dir.display());
    }
    let mut paths = Vec::new();
    collect_json(dir, &mut paths)?;
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let file = ReplayFile::load(&p)?;
            Ok((p, file))
        })
        .collect()
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn replay_seed(path: &Path, file: &ReplayFile) -> Result<CaseReport> {
    let t = Instant::now();
    let model = models::registry::build_mutant(
        &file.model,
        &file.variant,
        &file.params,
        file.mutant.as_deref(),
    )
    .with_context(|| format!("{}", path.display()))?;
    let config = RunConfig {
        max_steps: file.max_steps,
        trace: false,
        record_accesses: false,
    };
    let replay =
        Box::new(Replay::strict(file.decisions.clone()).watching_states(model.state_visible()));
    let r = run_once(model.as_ref(), replay, file.found.run, &config).0;
    let (ok, message) = match &r.outcome {
        RunOutcome::Violation(v) if v.invariant == file.violation.invariant => {
            match file.check_digest(r.digest) {
                DigestCheck::Same => (true, format!("reproduces {}", v.invariant)),
                DigestCheck::Drifted { replayed, recorded } => (
                    false,
                    format!(
                        "reproduces {} but the trace drifted (digest {replayed}, recorded {recorded})",
                        v.invariant
                    ),
                ),
                DigestCheck::Unchecked { format } => (
                    true,
                    format!(
                        "reproduces {} (a format {format} file: its digest is not checked; \
                         `braid shrink` rewrites it)",
                        v.invariant
                    ),
                ),
            }
        }
        RunOutcome::Violation(v) => (
            false,
            format!(
                "recorded {}, now violates {}: {}",
                file.violation.invariant, v.invariant, v.message
            ),
        ),
        RunOutcome::Diverged(d) => (false, format!("the model drifted: {d}")),
        _ => (
            false,
            format!(
                "recorded {} no longer reproduces: the run holds",
                file.violation.invariant
            ),
        ),
    };
    Ok(CaseReport {
        kind: "seed",
        name: path.display().to_string(),
        ok,
        message,
        replay: Some(path.display().to_string()),
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// Prints a new violation's replay command and its Mermaid diagram, for the pull request.
fn explain_new_violation(scenario: &str, invariant: &str, message: &str, file: &str) -> Result<()> {
    let replay = ReplayFile::load(Path::new(file))?;
    let model = models::registry::build_mutant(
        &replay.model,
        &replay.variant,
        &replay.params,
        replay.mutant.as_deref(),
    )?;
    let config = RunConfig {
        max_steps: replay.max_steps,
        trace: true,
        record_accesses: false,
    };
    let r = run_once(
        model.as_ref(),
        Box::new(Replay::strict(replay.decisions.clone()).watching_states(model.state_visible())),
        replay.found.run,
        &config,
    )
    .0;
    let title = format!("{scenario}: {invariant}");
    let caption = Caption {
        title: &title,
        verdict: Some((invariant, message)),
    };
    println!("\nNEW VIOLATION in {scenario}: {invariant}: {message}");
    println!("reproduce: braid replay {file}\n");
    println!(
        "```mermaid\n{}```\n",
        render::mermaid(&r.trace.unwrap_or_default(), &caption)
    );
    Ok(())
}

/// A seed for `--seed random`: drawn from the OS-seeded hasher outside any simulation, and
/// printed so the run can be repeated.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id().into());
    h.finish() % 1_000_000_000
}
