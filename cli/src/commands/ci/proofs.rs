//! (e) Every fixed scenario (one that expects `holds`, unless it says `ci_proof = false`) proved
//! by DFS: exhaustive, no violation, the reduction audited. Split across shards by index.

use std::time::Instant;

use anyhow::Result;
use sim::scenario::{Expected, Scenario};
use sim::Model;

use super::explain;
use super::inputs::Inputs;
use super::output::{Case, Cases, Kind};
use crate::cli::{BudgetArgs, StrategyArg};
use crate::commands::explore::explore_one;
use crate::report::ScenarioReport;

/// A proof that takes longer than this fails the gate (every one takes seconds today).
const PROOF_CAP_SECS: f64 = 300.0;

pub fn prove_all(inputs: &Inputs, cases: &mut Cases) -> Result<()> {
    let budget = BudgetArgs {
        strategy: Some(StrategyArg::Dfs),
        runs: None,
        time: Some(PROOF_CAP_SECS),
        shard: None,
        check_determinism: false,
        deepening: Some(false),
        audit_reduction: true,
        ..inputs.budget
    };
    let fixed = inputs
        .built()
        .filter(|(s, _)| s.expected == Expected::Holds && s.explore.ci_proof);
    for (k, (scenario, model)) in fixed.enumerate() {
        if crate::interrupt::interrupted() {
            break;
        }
        if inputs.mine(k) {
            cases.push(prove(scenario, model, &budget, inputs)?);
        }
    }
    Ok(())
}

fn prove(
    scenario: &Scenario,
    model: &dyn Model,
    budget: &BudgetArgs,
    inputs: &Inputs,
) -> Result<Case> {
    let t = Instant::now();
    let report = explore_one(scenario, model, None, budget, &inputs.args.out)?;
    let (ok, message) = verdict(&report);
    let first = report.violations.first();
    let new_violation = match first {
        Some(v) => Some(explain::new_violation(&scenario.name, v)?),
        None => None,
    };
    Ok(Case {
        replay: first.map(|v| v.replay_file.clone()),
        new_violation,
        ..Case::new(Kind::Proof, scenario.name.clone(), ok, message, t)
    })
}

/// Whether the search proved the scenario, and what it established.
fn verdict(report: &ScenarioReport) -> (bool, String) {
    let bound = match report.preemption_bound {
        Some(b) => format!("within {}", sim::explore::preemptions(b)),
        None => "with no preemption bound".into(),
    };
    let misses = report.audit.as_ref().map_or(&[][..], |a| &a.misses[..]);
    match report.violations.first() {
        _ if !misses.is_empty() => (
            false,
            format!("reduction audit failed: {}", misses.join("; ")),
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
                    Some(k) if !report.exhaustive => {
                        format!("within {}", sim::explore::preemptions(k))
                    }
                    _ => format!(
                        "over {}",
                        sim::explore::every_schedule(report.yielded_fairly)
                    ),
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
    }
}
