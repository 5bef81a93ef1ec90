//! An exploration's summary and written violations as the scenario's report: outcome against
//! the expectation (with a coarse grain's check), and what the search covered.

use anyhow::{Context, Result};
use sim::explore::{SearchVerdict, Summary};
use sim::scenario::Scenario;
use sim::strategy::StrategyKind;
use sim::summary_file::{Judged, Subject};

use super::plan::Plan;
use super::write::Target;
use crate::cli::BudgetArgs;
use crate::report::{GrainCheckReport, ScenarioReport, ShardInfo, ViolationReport};

pub fn report(
    target: &Target,
    plan: &Plan,
    args: &BudgetArgs,
    summary: &Summary,
    violations: Vec<ViolationReport>,
    interrupted: bool,
) -> Result<ScenarioReport> {
    let scenario = target.scenario;
    let outcome = outcome(&violations, summary, plan.strategy, interrupted);
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

/// The summary's verdict (`Summary::verdict`, as every entry point judges one), in words.
fn outcome(
    violations: &[ViolationReport],
    summary: &Summary,
    asked: StrategyKind,
    interrupted: bool,
) -> &'static str {
    if !violations.is_empty() {
        return "violation";
    }
    if interrupted {
        return "interrupted";
    }
    match summary.verdict(asked) {
        SearchVerdict::Violated => "violation",
        SearchVerdict::Holds => "holds",
        SearchVerdict::Inconclusive(_) => "inconclusive",
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
    let subject = Subject {
        scenario: &scenario.name,
        model: &scenario.model,
        variant: &scenario.variant,
        mutant: target.mutant,
        seed: plan.seed,
        grain: target.model.grain(),
        expected: scenario.expected.to_string(),
    };
    let shard = args.shard.map(|s| ShardInfo {
        index: s.index,
        count: s.count,
        budget_runs: plan.unsharded_runs,
    });
    ScenarioReport::of(&subject, summary, shard, judged)
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
