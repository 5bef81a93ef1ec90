//! `braid explore`: explore each scenario, write a replay file per violated invariant, report.

mod plan;
mod summarize;
mod write;

pub use plan::strategy_for;

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use sim::explore::Progress;
use sim::scenario::Scenario;

use crate::cli::{BudgetArgs, Cli, ExploreArgs, Format};
use crate::report::{RenderText, ScenarioReport};
use crate::{interrupt, Exit};
use plan::Plan;
use write::{write_violations, Target};

pub fn run(cli: &Cli, args: &ExploreArgs) -> Result<Exit> {
    if let Some(filter) = &args.test {
        return super::cargo_test::explore(args, filter);
    }
    let scenarios = select(&cli.scenario_dir()?, &args.scenarios)?;
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
    } else if reports.len() > 1 {
        println!("{}", summary_line(&reports));
    }
    // 0: every outcome as its scenario expects (a bug found where one is expected included);
    // 1: some outcome not as expected.
    let surprised = reports.iter().any(|r| !r.matches_expectation);
    Ok(if interrupt::interrupted() {
        Exit::Interrupted
    } else if surprised {
        Exit::Violation
    } else {
        Exit::Clean
    })
}

/// "explored 12 scenarios: 11 as expected, 1 not (broker-x)".
fn summary_line(reports: &[ScenarioReport]) -> String {
    let not: Vec<&str> = reports
        .iter()
        .filter(|r| !r.matches_expectation)
        .map(|r| r.scenario.as_str())
        .collect();
    let mut line = format!(
        "explored {} scenarios: {} as expected",
        reports.len(),
        reports.len() - not.len()
    );
    if !not.is_empty() {
        line += &format!(", {} not ({})", not.len(), not.join(", "));
    }
    line
}

/// The scenarios named on the command line (`all`: every file in the directory).
pub fn select(dir: &Path, names: &[String]) -> Result<Vec<Scenario>> {
    if names.iter().any(|n| n == "all") {
        return Ok(Scenario::load_dir(dir)?);
    }
    names
        .iter()
        .map(|n| Scenario::find(dir, n).map_err(|e| with_suggestion(dir, n, e)))
        .collect()
}

/// An unknown scenario name's error, with the nearest known name when one is close.
fn with_suggestion(dir: &Path, name: &str, error: sim::scenario::ScenarioError) -> anyhow::Error {
    if !matches!(error, sim::scenario::ScenarioError::NotFound { .. }) {
        return error.into();
    }
    let known: Vec<String> = Scenario::paths_in(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
        .collect();
    let nearest = known
        .iter()
        .map(|k| (edit_distance(name, k), k))
        .min()
        .filter(|(d, k)| *d <= (k.len().max(name.len()) / 3).max(2));
    match nearest {
        Some((_, k)) => anyhow::anyhow!("{error}; did you mean `{k}`?"),
        None => error.into(),
    }
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
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
    let plan = Plan::new(scenario, model, args)?;
    let shrink = args.shrink.options().map_err(anyhow::Error::msg)?;
    let label = match mutant {
        Some(guard) => format!("{} without {guard}", scenario.name),
        None => scenario.name.clone(),
    };
    let bar = progress_bar(&label, plan.runs);
    let mut explorer = plan.explorer(model, scenario, args);
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
    let target = Target {
        scenario,
        model,
        mutant,
        out,
    };
    let shrink = (!args.no_shrink && !interrupted).then_some(shrink);
    let violations = write_violations(&target, &plan, &summary, shrink)?;
    summarize::report(&target, &plan, args, &summary, violations, interrupted)
}

/// A progress bar on a terminal; none when stderr is piped (or JSON goes to stdout).
fn progress_bar(name: &str, runs: Option<u64>) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(runs.unwrap_or(0));
    let template = if runs.is_some() {
        "{prefix:.bold} [{bar:30}] {pos}/{len} runs, {rate}, {msg} ({eta})"
    } else {
        "{prefix:.bold} {spinner} {pos} runs, {rate}, {msg} ({elapsed})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        // Whole runs per second: indicatif's {per_sec} prints four decimals.
        let rate = |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0} runs/s", state.per_sec());
        };
        bar.set_style(style.with_key("rate", rate).progress_chars("=> "));
    }
    bar.set_prefix(name.to_string());
    Some(bar)
}
