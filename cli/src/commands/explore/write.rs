//! The violations an exploration found, each minimised (unless asked not to, or after a Ctrl-C)
//! and written as a replay file.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use sim::explore::{Found, Summary};
use sim::replay_file::{digest_hex, FoundBy, ReplayFile, ShrunkFrom, FORMAT_VERSION};
use sim::scenario::Scenario;
use sim::shrink::{shrink_with, ShrinkOptions};
use sim::RunConfig;

use super::plan::Plan;
use crate::report::ViolationReport;

/// What is explored, and where its replay files go.
pub struct Target<'a> {
    pub scenario: &'a Scenario,
    pub model: &'a dyn sim::Model,
    /// The guard knocked out, for a mutant.
    pub mutant: Option<&'a str>,
    pub out: &'a Path,
}

/// Writes a replay file per violated invariant of `summary` (the audit's finds included);
/// `shrink`: minimise each first.
pub fn write_violations(
    target: &Target,
    plan: &Plan,
    summary: &Summary,
    shrink: Option<ShrinkOptions>,
) -> Result<Vec<ViolationReport>> {
    let missed = audit_violations(summary);
    summary
        .violations
        .iter()
        .chain(&missed)
        .map(|found| write_one(target, plan, found, shrink))
        .collect()
}

/// A violation the audit reached below a pruned branch is a violation of the model all the
/// same: reported, and written, like any other.
fn audit_violations(summary: &Summary) -> Vec<Found> {
    summary
        .audit
        .iter()
        .flat_map(|a| &a.misses)
        .filter_map(|m| {
            let v = m.run.violation()?;
            Some(Found {
                invariant: v.invariant.clone(),
                message: format!("{} (found by the reduction audit)", v.message),
                first_run: 0,
                runs_to_first: 0,
                count: 1,
                time_to_first: Duration::ZERO,
                by: summary.strategy,
                run: m.run.clone(),
            })
        })
        .collect()
}

fn write_one(
    target: &Target,
    plan: &Plan,
    found: &Found,
    shrink: Option<ShrinkOptions>,
) -> Result<ViolationReport> {
    let scenario = target.scenario;
    let config = RunConfig {
        max_steps: scenario.explore.max_steps,
        trace: false,
        record_accesses: false,
    };
    let (run, shrunk_from, minimality, shrink_timed_out) = match shrink {
        None => (found.run.clone(), None, None, false),
        Some(options) => {
            let shrunk = shrink_with(target.model, &found.run, &config, options);
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
        }
    };
    let file = ReplayFile {
        format: FORMAT_VERSION,
        scenario: scenario.name.clone(),
        model: scenario.model.clone(),
        variant: scenario.variant.clone(),
        mutant: target.mutant.map(str::to_string),
        params: scenario.params.clone(),
        grain: None,
        max_steps: scenario.explore.max_steps,
        found: FoundBy {
            strategy: plan.strategy.name().to_string(),
            depth: plan.strategy.depth(),
            seed: plan.seed,
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
    let path = file.default_path(target.out);
    file.write_atomic(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(ViolationReport {
        minimality,
        shrink_timed_out,
        ..ViolationReport::of(
            found,
            file.violation.message.clone(),
            (run.steps, run.preemptions),
            path.display().to_string(),
        )
    })
}
