//! An exploration's summary and written violations as the scenario's report: outcome against
//! the expectation (with a coarse grain's check), and what the search covered.

use anyhow::{Context, Result};
use sim::audit::AuditReport;
use sim::distinct::Sketch;
use sim::explore::Summary;
use sim::scenario::Scenario;
use sim::strategy::{Reduction, StrategyKind};

use super::plan::Plan;
use super::write::Target;
use crate::cli::BudgetArgs;
use crate::report::{
    AuditSummary, GrainCheckReport, ScenarioReport, ShardInfo, ViolationReport, REPORT_FORMAT,
};

/// What the exploration came to: its outcome, and whether that is what the scenario expects.
struct Judged {
    outcome: &'static str,
    grain_check: Option<GrainCheckReport>,
    matches_expectation: bool,
    violations: Vec<ViolationReport>,
    interrupted: bool,
}

pub fn report(
    target: &Target,
    plan: &Plan,
    args: &BudgetArgs,
    summary: &Summary,
    violations: Vec<ViolationReport>,
    interrupted: bool,
) -> Result<ScenarioReport> {
    let scenario = target.scenario;
    let outcome = outcome(&violations, summary, interrupted);
    let grain_check = check_grain(scenario, target.model, target.mutant, outcome, plan.seed)?;
    let matches_expectation = !matches!(outcome, "inconclusive" | "interrupted")
        && summary.audit.as_ref().is_none_or(|a| a.passed())
        && grain_check
            .as_ref()
            .is_none_or(GrainCheckReport::as_declared)
        && scenario
            .expected
            .matches(violations.iter().map(|v| v.invariant.as_str()));
    let judged = Judged {
        outcome,
        grain_check,
        matches_expectation,
        violations,
        interrupted,
    };
    Ok(assemble(target, plan, args, summary, judged))
}

/// A search that saw no run through proves nothing, whatever it expected.
fn outcome(violations: &[ViolationReport], summary: &Summary, interrupted: bool) -> &'static str {
    match (violations.is_empty(), summary.proves_nothing()) {
        (false, _) => "violation",
        (true, _) if interrupted => "interrupted",
        (true, true) => "inconclusive",
        (true, false) => "holds",
    }
}

fn assemble(
    target: &Target,
    plan: &Plan,
    args: &BudgetArgs,
    summary: &Summary,
    judged: Judged,
) -> ScenarioReport {
    let scenario = target.scenario;
    let strategy = summary.strategy;
    let (preemption_bound, reduction) = dfs_settings(strategy);
    let (schedule_digests, schedule_sketch, end_state_digests) =
        shard_digests(summary, args.shard.is_some());
    ScenarioReport {
        format: REPORT_FORMAT,
        scenario: scenario.name.clone(),
        model: scenario.model.clone(),
        variant: scenario.variant.clone(),
        mutant: target.mutant.map(str::to_string),
        strategy: strategy.name().to_string(),
        depth: strategy.depth(),
        seed: plan.seed,
        shard: shard_info(args, plan),
        runs: summary.runs,
        distinct_schedules: summary.distinct_schedules,
        distinct_schedules_estimated: summary.distinct_estimated(),
        elapsed_ms: summary.elapsed.as_secs_f64() * 1e3,
        runs_per_sec: summary.runs_per_sec(),
        max_steps_seen: summary.max_steps_seen,
        grain: target.model.grain().name().to_string(),
        grain_check: judged.grain_check,
        exhaustive: summary.exhaustive,
        yielded_fairly: summary.yielded_fairly,
        plan: summary.plan.map(|p| p.describe(summary.yielded_fairly)),
        proved_bound: summary.proved_bound,
        pruned: summary.pruned,
        preemption_bound,
        reduction,
        end_states: summary.end_states.len(),
        pct_bound: summary.pct_bound(),
        pct_confidence: summary.pct_confidence(),
        schedule_digests,
        schedule_sketch,
        end_state_digests,
        determinism_checked: summary.determinism_checked,
        interrupted: judged.interrupted,
        outcome: judged.outcome.to_string(),
        expected: scenario.expected.to_string(),
        matches_expectation: judged.matches_expectation,
        violations: judged.violations,
        audit: summary.audit.as_ref().map(audit_summary),
    }
}

/// The explorer may have turned reduction off (bounded search, or a model it cannot see into).
fn dfs_settings(strategy: StrategyKind) -> (Option<usize>, Option<Reduction>) {
    match strategy {
        StrategyKind::Dfs {
            preemption_bound,
            reduction,
        } => (preemption_bound, Some(reduction)),
        _ => (None, None),
    }
}

/// With --shard: which shard of how many, of which budget.
fn shard_info(args: &BudgetArgs, plan: &Plan) -> Option<ShardInfo> {
    args.shard.map(|s| ShardInfo {
        index: s.index,
        count: s.count,
        budget_runs: plan.unsharded_runs,
    })
}

/// With --shard: the digests of the schedules (or their sketch, past `Distinct::CAP`) and of
/// the end states, so `braid merge` counts them across shards.
fn shard_digests(
    summary: &Summary,
    sharded: bool,
) -> (Option<Vec<u64>>, Option<Sketch>, Option<Vec<u64>>) {
    let schedules = summary
        .schedules
        .digests()
        .filter(|_| sharded)
        .map(|d| d.iter().copied().collect());
    let sketch = summary.schedules.sketch().filter(|_| sharded).cloned();
    let end_states = sharded.then(|| summary.end_states.iter().copied().collect());
    (schedules, sketch, end_states)
}

fn audit_summary(a: &AuditReport) -> AuditSummary {
    AuditSummary {
        pruned_branches: a.pruned,
        audited: a.audited,
        complete: a.complete,
        runs: a.runs,
        misses: a.misses.iter().map(|m| m.what.clone()).collect(),
    }
}

/// A coarse-grain scenario that held owes a grain check (access-grain portfolio runs); what
/// they find must be what the scenario declares its grain hides (`hides`), else the "holds"
/// does not stand. Mutants are judged on what their search finds, and skip it.
fn check_grain(
    scenario: &Scenario,
    model: &dyn sim::Model,
    mutant: Option<&str>,
    outcome: &str,
    seed: u64,
) -> Result<Option<GrainCheckReport>> {
    if model.grain() == sim::Grain::Access || mutant.is_some() || outcome != "holds" {
        return Ok(None);
    }
    let runs = sim::explore::GRAIN_CHECK_RUNS;
    let found = sim::explore::grain_check(model, seed, runs, scenario.explore.max_steps)
        .with_context(|| format!("grain check of {}", scenario.name))?;
    Ok(Some(GrainCheckReport {
        runs,
        invariant: found.as_ref().map(|f| f.invariant.clone()),
        message: found.map(|f| f.message),
        declared: scenario.hides.clone(),
    }))
}
