//! `braid mutants`: every guard of every fixed variant (a variant some scenario expects to
//! hold) is knocked out in turn, and that mutant is explored on each of the variant's
//! scenarios, with each scenario's budget, until one catches it (a violation; its replay file
//! is written). A guard no scenario catches survived: the scenarios do not test it. Exit 1 if
//! any survived.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use sim::scenario::{Expected, Scenario};

use super::explore::{explore_one, select};
use crate::cli::{BudgetArgs, Cli, Format, MutantsArgs};
use crate::report::{ViolationReport, REPORT_FORMAT};
use crate::{colour, interrupt, Exit};

#[derive(Serialize)]
pub struct MutantReport {
    /// `REPORT_FORMAT`.
    pub format: u32,
    pub model: String,
    pub variant: String,
    pub guard: String,
    pub caught: bool,
    /// The scenario that caught it, and how.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caught_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub violation: Option<ViolationReport>,
    /// Scenarios explored, in order, and their runs.
    pub tried: Vec<(String, u64)>,
    /// Stopped by Ctrl-C before a scenario caught it: neither caught nor survived.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

pub fn run(cli: &Cli, args: &MutantsArgs) -> Result<Exit> {
    let scenarios = select(&cli.scenario_dir()?, &args.scenarios)?;
    let plan = plan(&scenarios)?;
    interrupt::install();
    let mut reports = Vec::new();
    for (model, variant, guard, group) in plan {
        if interrupt::interrupted() {
            break;
        }
        let report = hunt(&model, &variant, guard, &group, &args.budget, &args.out)?;
        if args.format == Format::Text {
            print_line(&report);
        }
        reports.push(report);
    }
    let survived = reports
        .iter()
        .filter(|r| !r.caught && !r.interrupted)
        .count();
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => println!(
            "\n{} mutants: {} caught, {} survived{}",
            reports.len(),
            reports.iter().filter(|r| r.caught).count(),
            survived,
            match interrupt::interrupted() {
                true => " (INTERRUPTED: the rest not run)",
                false => "",
            }
        ),
    }
    Ok(if interrupt::interrupted() {
        Exit::Interrupted
    } else if survived > 0 {
        Exit::Violation
    } else {
        Exit::Clean
    })
}

type Mutant<'a> = (String, String, &'static str, Vec<&'a Scenario>);

/// Every (model, variant, guard) of a variant some scenario expects to hold, with the variant's
/// scenarios. Scenarios that already violate would "catch" every mutant, so they do not count.
pub fn plan(scenarios: &[Scenario]) -> Result<Vec<Mutant<'_>>> {
    let mut by_variant: BTreeMap<(String, String), Vec<&Scenario>> = BTreeMap::new();
    for s in scenarios.iter().filter(|s| s.expected == Expected::Holds) {
        by_variant
            .entry((s.model.clone(), s.variant.clone()))
            .or_default()
            .push(s);
    }
    let mut plan = Vec::new();
    for ((model, variant), group) in by_variant {
        let guards = models::registry::guards(&model, &variant)
            .with_context(|| format!("scenario {}", group[0].path.display()))?;
        for guard in guards {
            plan.push((model.clone(), variant.clone(), guard, group.clone()));
        }
    }
    Ok(plan)
}

/// Explores the mutant on each scenario of its variant until one catches it.
pub fn hunt(
    model: &str,
    variant: &str,
    guard: &str,
    scenarios: &[&Scenario],
    budget: &BudgetArgs,
    out: &Path,
) -> Result<MutantReport> {
    let mut report = MutantReport {
        format: REPORT_FORMAT,
        model: model.to_string(),
        variant: variant.to_string(),
        guard: guard.to_string(),
        caught: false,
        caught_by: None,
        violation: None,
        tried: Vec::new(),
        interrupted: false,
    };
    for scenario in scenarios {
        let mutant = models::registry::build_mutant(model, variant, &scenario.params, Some(guard))
            .with_context(|| format!("scenario {}", scenario.path.display()))?;
        let exploration = explore_one(scenario, mutant.as_ref(), Some(guard), budget, out)?;
        report.tried.push((scenario.name.clone(), exploration.runs));
        report.interrupted = exploration.interrupted;
        if let Some(v) = exploration.violations.into_iter().next() {
            report.caught = true;
            report.caught_by = Some(scenario.name.clone());
            report.violation = Some(v);
            break;
        }
        if report.interrupted {
            break;
        }
    }
    Ok(report)
}

fn print_line(r: &MutantReport) {
    let name = format!("{}/{} without {}", r.model, r.variant, r.guard);
    match (&r.caught_by, &r.violation) {
        (Some(scenario), Some(v)) => println!(
            "{}    {name:<60} by {scenario}: {} (first in run {}); braid replay {}",
            colour::verdict("caught", true),
            v.invariant,
            v.runs_to_first,
            v.replay_file
        ),
        _ if r.interrupted => println!(
            "{}  {name:<60} interrupted",
            colour::verdict("STOPPED", false)
        ),
        _ => {
            let tried: Vec<String> = r
                .tried
                .iter()
                .map(|(s, runs)| format!("{s} ({runs} runs)"))
                .collect();
            println!(
                "{}  {name:<60} holds on {}",
                colour::verdict("SURVIVED", false),
                tried.join(", ")
            );
        }
    }
}
