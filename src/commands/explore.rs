//! `braid explore`: explore each scenario, write a replay file per violated invariant, report.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use sim::explore::{Explorer, Progress};
use sim::replay_file::{digest_hex, FoundBy, ReplayFile, ShrunkFrom, FORMAT_VERSION};
use sim::scenario::{parse_strategy, Scenario};
use sim::shrink::shrink_with;
use sim::strategy::{Reduction, StrategyKind};
use sim::RunConfig;

use crate::cli::{BudgetArgs, Cli, ExploreArgs, Format, StrategyArg};
use crate::report::{AuditSummary, ScenarioReport, ShardInfo, ViolationReport, REPORT_FORMAT};
use crate::{interrupt, Verdict};

pub fn run(cli: &Cli, args: &ExploreArgs) -> Result<Verdict> {
    let scenarios = select(&cli.scenario_dir, &args.scenarios)?;
    interrupt::install();
    // Build every model first: bad input fails before any exploration starts.
    let mut built = Vec::new();
    for s in scenarios {
        models::registry::check_expected(&s.model, &s.expected)
            .with_context(|| format!("scenario {}", s.path.display()))?;
        let model = models::registry::build(&s.model, &s.variant, &s.params)
            .with_context(|| format!("scenario {}", s.path.display()))?;
        built.push((s, model));
    }
    let mut reports = Vec::new();
    for (scenario, model) in &built {
        let report = explore_one(scenario, model.as_ref(), None, &args.budget, &args.out)?;
        if args.format == Format::Text {
            print!("{}", report.render_text());
        }
        reports.push(report);
        if interrupt::interrupted() {
            break;
        }
    }
    if args.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    }
    // 0: every outcome as its scenario expects (a bug found where one is expected included);
    // 1: some outcome not as expected.
    let surprised = reports.iter().any(|r| !r.matches_expectation);
    Ok(if interrupt::interrupted() {
        Verdict::Interrupted
    } else if surprised {
        Verdict::Violation
    } else {
        Verdict::Clean
    })
}

/// The scenarios named on the command line (`all`: every file in the directory).
pub fn select(dir: &Path, names: &[String]) -> Result<Vec<Scenario>> {
    if names.iter().any(|n| n == "all") {
        return Ok(Scenario::load_dir(dir)?);
    }
    names
        .iter()
        .map(|n| Scenario::find(dir, n).map_err(Into::into))
        .collect()
}

/// Explores `model` (the scenario's variant, or its mutant without guard `mutant`), writes a
/// minimised replay file per violated invariant under `out`, and reports.
pub fn explore_one(
    scenario: &Scenario,
    model: &dyn sim::Model,
    mutant: Option<&str>,
    args: &BudgetArgs,
    out: &Path,
) -> Result<ScenarioReport> {
    let defaults = &scenario.explore;
    let strategy = strategy_for(scenario, model, args)?;
    let seed = args.seed.unwrap_or(defaults.seed);
    let time = match args.time {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            anyhow::bail!("--time must be a positive number of seconds")
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => defaults.time.map(Duration::from_secs),
    };
    let runs = match (args.runs, time) {
        (Some(r), _) => Some(r),
        (None, Some(_)) if args.time.is_some() => None,
        // DFS runs until the bounded space is exhausted unless a budget is given.
        (None, _) if strategy.is_exhaustive() => None,
        (None, _) => Some(defaults.runs),
    };
    // Shard i of n takes run indices i-1, i-1+n, ... (DFS: subtrees i-1, i-1+n, ...): the shards'
    // union is the unsharded run set.
    let unsharded_runs = runs;
    let (first_run, stride, runs) = match (args.shard, runs) {
        (None, runs) => (0, 1, runs),
        (Some(shard), runs) => (shard.index - 1, shard.count, runs.map(|r| shard.share(r))),
    };
    let label = match mutant {
        Some(guard) => format!("{} without {guard}", scenario.name),
        None => scenario.name.clone(),
    };
    let bar = progress_bar(&label, runs);
    let mut explorer = Explorer::new(model)
        .strategy(strategy)
        .seed(seed)
        .max_steps(defaults.max_steps)
        .first_run(first_run)
        .stride(stride)
        .jobs(
            args.jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        )
        .check_determinism(args.check_determinism);
    if let Some(r) = runs {
        explorer = explorer.runs(r);
    }
    if let Some(t) = time {
        explorer = explorer.time(t);
    }
    if let Some(on) = args.deepening {
        explorer = explorer.deepening(on);
    }
    if args.audit_reduction {
        explorer = explorer.audit(AUDITED_BRANCHES);
    }
    if let Some(flag) = interrupt::flag() {
        explorer = explorer.cancel_on(flag);
    }
    if let Some(bar) = &bar {
        explorer = explorer.on_progress(|p: &Progress| {
            bar.set_position(p.runs);
            bar.set_message(format!("{} violated", p.violations));
        });
    }
    let summary = explorer
        .run()
        .with_context(|| format!("exploring {label}"))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // After a Ctrl-C, what was found is written as found: the user asked for it now.
    let interrupted = interrupt::interrupted();
    let mut violations = Vec::new();
    let run_config = RunConfig {
        max_steps: defaults.max_steps,
        trace: false,
        record_accesses: false,
    };
    let shrink_options = args.shrink.options().map_err(anyhow::Error::msg)?;
    // A violation the audit reached below a pruned branch is a violation of the model all
    // the same: reported, and written, like any other.
    let audit = summary.audit.as_ref();
    let missed_violations: Vec<sim::explore::Found> = audit
        .into_iter()
        .flat_map(|a| &a.misses)
        .filter_map(|m| {
            let v = m.run.violation()?;
            Some(sim::explore::Found {
                invariant: v.invariant.clone(),
                message: format!("{} (found by the reduction audit)", v.message),
                first_run: 0,
                count: 1,
                time_to_first: Duration::ZERO,
                run: m.run.clone(),
            })
        })
        .collect();
    for found in summary.violations.iter().chain(&missed_violations) {
        let (run, shrunk_from, minimality, shrink_timed_out) = if args.no_shrink || interrupted {
            (found.run.clone(), None, None, false)
        } else {
            let shrunk = shrink_with(model, &found.run, &run_config, shrink_options);
            let from = ShrunkFrom {
                steps: shrunk.before_steps,
                preemptions: shrunk.before_preemptions,
            };
            (
                shrunk.run,
                Some(from),
                Some(shrunk.minimality),
                shrunk.timed_out,
            )
        };
        let file = ReplayFile {
            format: FORMAT_VERSION,
            scenario: scenario.name.clone(),
            model: scenario.model.clone(),
            variant: scenario.variant.clone(),
            mutant: mutant.map(str::to_string),
            params: scenario.params.clone(),
            max_steps: defaults.max_steps,
            found: FoundBy {
                strategy: strategy.name().to_string(),
                depth: strategy.depth(),
                seed,
                run: found.first_run,
            },
            violation: run
                .violation()
                .cloned()
                .expect("a found violation's run violates"),
            steps: run.steps,
            preemptions: run.preemptions,
            minimality,
            shrunk_from,
            digest: digest_hex(run.digest),
            decisions: run.decisions(),
        };
        let path = file.default_path(out);
        file.write_atomic(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        violations.push(ViolationReport {
            invariant: found.invariant.clone(),
            message: file.violation.message.clone(),
            first_run: found.first_run,
            count: found.count,
            time_to_first_ms: found.time_to_first.as_secs_f64() * 1e3,
            steps: run.steps,
            preemptions: run.preemptions,
            minimality,
            shrink_timed_out,
            found_steps: found.run.steps,
            found_preemptions: found.run.preemptions,
            replay_file: path.display().to_string(),
        });
    }
    // A search that saw no run through proves nothing, whatever it expected.
    let outcome = match (violations.is_empty(), summary.proves_nothing()) {
        (false, _) => "violation",
        (true, _) if interrupted => "interrupted",
        (true, true) => "inconclusive",
        (true, false) => "holds",
    };
    let audit_passed = audit.is_none_or(|a| a.passed());
    let matches_expectation = !matches!(outcome, "inconclusive" | "interrupted")
        && audit_passed
        && scenario
            .expected
            .matches(violations.iter().map(|v| v.invariant.as_str()));
    // The explorer may have turned reduction off (bounded search, or a model it cannot see into).
    let strategy = summary.strategy;
    Ok(ScenarioReport {
        format: REPORT_FORMAT,
        scenario: scenario.name.clone(),
        model: scenario.model.clone(),
        variant: scenario.variant.clone(),
        mutant: mutant.map(str::to_string),
        strategy: strategy.name().to_string(),
        depth: strategy.depth(),
        seed,
        shard: args.shard.map(|s| ShardInfo {
            index: s.index,
            count: s.count,
            budget_runs: unsharded_runs,
        }),
        runs: summary.runs,
        distinct_schedules: summary.distinct_schedules,
        elapsed_ms: summary.elapsed.as_secs_f64() * 1e3,
        runs_per_sec: summary.runs_per_sec(),
        max_steps_seen: summary.max_steps_seen,
        exhaustive: summary.exhaustive,
        proved_bound: summary.proved_bound,
        pruned: summary.pruned,
        preemption_bound: match strategy {
            sim::strategy::StrategyKind::Dfs {
                preemption_bound, ..
            } => preemption_bound,
            _ => None,
        },
        reduction: match strategy {
            sim::strategy::StrategyKind::Dfs { reduction, .. } => Some(reduction),
            _ => None,
        },
        end_states: summary.end_states.len(),
        pct_bound: summary.pct_bound(),
        pct_confidence: summary.pct_confidence(),
        schedule_digests: args
            .shard
            .map(|_| summary.digests.iter().copied().collect()),
        end_state_digests: args
            .shard
            .map(|_| summary.end_states.iter().copied().collect()),
        determinism_checked: summary.determinism_checked,
        interrupted,
        outcome: outcome.to_string(),
        expected: scenario.expected.to_string(),
        matches_expectation,
        violations,
        audit: audit.map(|a| AuditSummary {
            pruned_branches: a.pruned,
            audited: a.audited,
            complete: a.complete,
            runs: a.runs,
            misses: a.misses.iter().map(|m| m.what.clone()).collect(),
        }),
    })
}

/// The strategy `scenario` is explored with: the command line's settings over the scenario's.
pub fn strategy_for(
    scenario: &Scenario,
    model: &dyn sim::Model,
    args: &BudgetArgs,
) -> Result<StrategyKind> {
    let defaults = &scenario.explore;
    let strategy_name = match args.strategy {
        Some(StrategyArg::Random) => "random",
        Some(StrategyArg::Pct) => "pct",
        Some(StrategyArg::Dfs) => "dfs",
        Some(StrategyArg::Portfolio) => "portfolio",
        None => defaults.strategy.as_str(),
    };
    parse_strategy(
        strategy_name,
        args.depth.unwrap_or(defaults.depth),
        args.preemption_bound
            .map_or(defaults.preemption_bound, |b| b.0),
        if args.no_reduction {
            Some(Reduction::None)
        } else {
            args.reduction
        },
        model.state_visible(),
    )
    .map_err(anyhow::Error::msg)
}

/// Pruned branches the reduction audit re-explores (a seeded sample).
const AUDITED_BRANCHES: usize = 32;

/// A progress bar on a terminal; none when stderr is piped (or JSON goes to stdout).
fn progress_bar(name: &str, runs: Option<u64>) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(runs.unwrap_or(0));
    let template = if runs.is_some() {
        "{prefix:.bold} [{bar:30}] {pos}/{len} runs, {per_sec}, {msg} ({eta})"
    } else {
        "{prefix:.bold} {spinner} {pos} runs, {per_sec}, {msg} ({elapsed})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(name.to_string());
    Some(bar)
}
