//! A replayed run on stdout: a Mermaid diagram, the JSON report, or the trace as text with the
//! verdict.

use anyhow::Result;
use serde::Serialize;
use sim::render::{self, Caption};
use sim::replay_file::digest_hex;
use sim::Violation;

use super::Replayed;
use crate::cli::{Format, ReplayArgs};
use crate::colour;
use crate::report::REPORT_FORMAT;

#[derive(Serialize)]
struct ReplayReport<'a> {
    /// `REPORT_FORMAT`.
    format: u32,
    file: String,
    scenario: &'a str,
    model: &'a str,
    variant: &'a str,
    reproduced: bool,
    violation: Option<&'a Violation>,
    steps: usize,
    preemptions: usize,
    digest: String,
    trace: &'a sim::trace::Trace,
}

pub(super) fn print(args: &ReplayArgs, replayed: &Replayed, caption: &Caption<'_>) -> Result<()> {
    match args.format {
        _ if args.mermaid => mermaid_of(&replayed.trace, caption, args.compact),
        Format::Json => json(replayed)?,
        Format::Text => text(replayed),
    }
    Ok(())
}

/// Prints the run as a fenced Mermaid sequence diagram.
pub(super) fn mermaid_of(trace: &sim::trace::Trace, caption: &Caption<'_>, compact: bool) {
    let diagram = match compact {
        true => render::mermaid_compact(trace, caption),
        false => render::mermaid(trace, caption),
    };
    println!("```mermaid\n{diagram}```");
}

fn json(replayed: &Replayed) -> Result<()> {
    let Replayed {
        file,
        path,
        result,
        trace,
        reproduced,
    } = replayed;
    let report = ReplayReport {
        format: REPORT_FORMAT,
        file: path.clone(),
        scenario: &file.scenario,
        model: &file.model,
        variant: &file.variant,
        reproduced: *reproduced,
        violation: result.violation(),
        steps: result.steps,
        preemptions: result.preemptions,
        digest: digest_hex(result.digest),
        trace,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// Where the run came from, its trace, the verdict, and who held what at a deadlock.
fn text(replayed: &Replayed) {
    let Replayed {
        file,
        result,
        trace,
        ..
    } = replayed;
    println!(
        "{} ({}/{}), found by {} seed {} run {}",
        file.scenario,
        file.model,
        file.variant,
        file.found.strategy,
        file.found.seed,
        file.found.run
    );
    println!(
        "{} steps, {} (marked *)\n",
        result.steps,
        sim::explore::preemptions(result.preemptions)
    );
    print!("{}", trace.render_text());
    println!();
    verdict(replayed);
    // A deadlock's message says who waits on what; this says who holds it.
    let waits = trace.render_wait_for();
    if !waits.is_empty() {
        print!("\nwait-for at the deadlock:\n{waits}");
    }
}

/// Whether the recorded violation reproduced, and if not, what the run did instead.
fn verdict(replayed: &Replayed) {
    let recorded = &replayed.file.violation.invariant;
    match replayed.result.violation() {
        Some(v) if replayed.reproduced => println!(
            "{}: {} at step {}: {}",
            colour::verdict("reproduced", true),
            v.invariant,
            v.step,
            v.message
        ),
        Some(v) => println!(
            "{}: recorded {recorded}, got {} at step {}: {}",
            colour::verdict("NOT reproduced", false),
            v.invariant,
            v.step,
            v.message
        ),
        None => println!(
            "{}: the run holds (recorded {recorded})",
            colour::verdict("NOT reproduced", false),
        ),
    }
}
