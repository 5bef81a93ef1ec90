//! A new violation, explained for the pull request: its replay file re-run with a trace, drawn
//! as a Mermaid diagram.

use std::path::Path;

use anyhow::Result;
use sim::render::{self, Caption};
use sim::replay_file::ReplayFile;

use super::output::NewViolation;
use crate::report::ViolationReport;

/// The compact Mermaid sequence diagram (tasks and events) of the run in replay file `file`.
fn mermaid(scenario: &str, invariant: &str, message: &str, file: &str) -> Result<String> {
    let replay = ReplayFile::load(Path::new(file))?;
    let model = models::registry::build_recorded(&replay)?;
    let r = replay.follow(model.as_ref(), true);
    let title = format!("{scenario}: {invariant}");
    let caption = Caption {
        title: &title,
        verdict: Some((invariant, message)),
    };
    Ok(render::mermaid_compact(
        &r.trace.unwrap_or_default(),
        &caption,
    ))
}

/// A violation no scenario expected, with what a reviewer needs to see it.
pub fn new_violation(scenario: &str, v: &ViolationReport) -> Result<NewViolation> {
    Ok(NewViolation {
        scenario: scenario.to_string(),
        invariant: v.invariant.clone(),
        message: v.message.clone(),
        replay: v.replay_file.clone(),
        mermaid: mermaid(scenario, &v.invariant, &v.message, &v.replay_file)?,
    })
}
