//! (b) Every scenario against its expectation, and (d) the determinism checks made on the way.

use std::time::Instant;

use anyhow::Result;
use sim::explore::ExploreError;
use sim::scenario::{Expected, Scenario};

use super::explain;
use super::inputs::Inputs;
use super::output::{Case, Cases, Kind};
use crate::commands::explore::explore_one;
use crate::report::ScenarioReport;

/// What the scenario explorations' determinism checks found.
#[derive(Default)]
pub struct Determinism {
    checked: u64,
    failures: Vec<String>,
}

impl Determinism {
    pub fn case(&self) -> Case {
        let (ok, message) = if self.failures.is_empty() {
            (
                true,
                format!("{} schedules re-run, identical traces", self.checked),
            )
        } else {
            (
                false,
                format!("trace differs on re-run: {}", self.failures.join(", ")),
            )
        };
        Case {
            seconds: 0.0,
            ..Case::new(
                Kind::Determinism,
                "re-run schedules are identical".into(),
                ok,
                message,
                Instant::now(),
            )
        }
    }

    pub fn checked(&self) -> u64 {
        self.checked
    }
}

pub fn explore_all(inputs: &Inputs, cases: &mut Cases) -> Result<Determinism> {
    let mut determinism = Determinism::default();
    for (scenario, model) in inputs.built() {
        if crate::interrupt::interrupted() {
            break;
        }
        let t = Instant::now();
        let name = scenario.name.clone();
        let case = match explore_one(scenario, model, None, &inputs.budget, &inputs.args.out) {
            Ok(report) => {
                determinism.checked += report.determinism_checked;
                judge(scenario, &report, t)?
            }
            Err(e) => {
                if nondeterministic(&e) {
                    determinism.failures.push(name.clone());
                }
                Case::new(Kind::Scenario, name, false, format!("{e:#}"), t)
            }
        };
        cases.push(case);
    }
    Ok(determinism)
}

fn nondeterministic(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<ExploreError>(),
        Some(ExploreError::Nondeterministic { .. })
    )
}

/// The exploration against the scenario's expectation; a violation it did not expect is
/// explained.
fn judge(scenario: &Scenario, report: &ScenarioReport, t: Instant) -> Result<Case> {
    let found: Vec<&str> = report
        .violations
        .iter()
        .map(|v| v.invariant.as_str())
        .collect();
    let message = match &scenario.expected {
        _ if report.interrupted => format!(
            "interrupted after {} runs: a partial exploration{}",
            report.runs,
            match found.is_empty() {
                true => String::new(),
                false => format!(", violated {}", found.join(", ")),
            }
        ),
        _ if report.matches_expectation => {
            format!("{} as expected ({} runs)", report.outcome, report.runs)
        }
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
    };
    let unexpected = report.violations.iter().find(|v| {
        !scenario
            .expected
            .matches(std::iter::once(v.invariant.as_str()))
    });
    let new_violation = match unexpected {
        Some(v) if !report.matches_expectation => Some(explain::new_violation(&scenario.name, v)?),
        _ => None,
    };
    Ok(Case {
        replay: unexpected.map(|v| v.replay_file.clone()),
        new_violation,
        ..Case::new(
            Kind::Scenario,
            scenario.name.clone(),
            report.matches_expectation,
            message,
            t,
        )
    })
}
