//! `braid mutants`: for each scenario expected to hold whose variant declares guards, knock each guard out in
//! turn and explore the mutant with the scenario's budget. A mutant is caught when exploration
//! finds a violation (its replay file is written); one that survives means the scenarios do not
//! test that guard. Exit 1 if any survived.

use anyhow::{Context, Result};
use serde::Serialize;
use sim::scenario::Expected;

use super::explore::{explore_one, select};
use crate::cli::{Cli, Format, MutantsArgs};
use crate::report::ScenarioReport;
use crate::Verdict;

#[derive(Serialize)]
struct MutantReport {
    scenario: String,
    guard: String,
    caught: bool,
    exploration: ScenarioReport,
}

pub fn run(cli: &Cli, args: &MutantsArgs) -> Result<Verdict> {
    let scenarios = select(&cli.scenario_dir, &args.scenarios)?;
    let mut plan = Vec::new();
    // Only scenarios expected to hold test their guards: a scenario that already violates would
    // "catch" every mutant.
    for s in scenarios.iter().filter(|s| s.expected == Expected::Holds) {
        let guards = models::registry::guards(&s.model, &s.variant)
            .with_context(|| format!("scenario {}", s.path.display()))?;
        for guard in guards {
            let model =
                models::registry::build_mutant(&s.model, &s.variant, &s.params, Some(guard))
                    .with_context(|| format!("scenario {}", s.path.display()))?;
            plan.push((s, guard, model));
        }
    }
    let mut reports = Vec::new();
    for (scenario, guard, model) in &plan {
        let exploration = explore_one(
            scenario,
            model.as_ref(),
            Some(guard),
            &args.budget,
            &args.out,
        )?;
        let caught = !exploration.violations.is_empty();
        if args.format == Format::Text {
            match exploration.violations.first() {
                Some(v) => println!(
                    "caught    {:<36} without {:<32} {} (run {}): braid replay {}",
                    scenario.name, guard, v.invariant, v.first_run, v.replay_file
                ),
                None => println!(
                    "SURVIVED  {:<36} without {:<32} holds for {} runs",
                    scenario.name, guard, exploration.runs
                ),
            }
        }
        reports.push(MutantReport {
            scenario: scenario.name.clone(),
            guard: guard.to_string(),
            caught,
            exploration,
        });
    }
    let survived = reports.iter().filter(|r| !r.caught).count();
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => println!(
            "\n{} mutants: {} caught, {} survived",
            reports.len(),
            reports.len() - survived,
            survived
        ),
    }
    Ok(if survived > 0 {
        Verdict::Violation
    } else {
        Verdict::Clean
    })
}
