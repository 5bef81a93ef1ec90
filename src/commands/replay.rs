//! `braid replay`: follow a replay file's decisions, print the trace, and say whether the
//! recorded violation reproduced. Exit 1 if it violates, 0 if it holds, 2 on bad input or drift.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use sim::render::{self, Caption};
use sim::replay_file::{
    check_target, digest_hex, write_atomic, DigestCheck, ReplayFile, FORMAT_VERSION,
};
use sim::strategy::Replay;
use sim::{run_once, RunConfig, RunOutcome, Violation};

use crate::cli::{Format, ReplayArgs};
use crate::colour;
use crate::report::REPORT_FORMAT;
use crate::Verdict;

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

pub fn run(args: &ReplayArgs) -> Result<Verdict> {
    // An output braid may not write is bad input, said before anything runs.
    for out in args.svg.iter().chain(&args.html) {
        check_target(out).with_context(|| format!("writing {}", out.display()))?;
    }
    let file = ReplayFile::load(&args.file)?;
    if file.model == super::cargo_test::TEST_MODEL {
        return super::cargo_test::replay(&file, &args.file);
    }
    let model = models::registry::build_mutant(
        &file.model,
        &file.variant,
        &file.params,
        file.mutant.as_deref(),
    )
    .with_context(|| format!("{}", args.file.display()))?;
    let config = RunConfig {
        max_steps: file.max_steps,
        trace: true,
        record_accesses: false,
    };
    let replay =
        Box::new(Replay::strict(file.decisions.clone()).watching_states(model.state_visible()));
    let (result, _) = run_once(model.as_ref(), replay, file.found.run, &config);
    let trace = result.trace.clone().unwrap_or_default();
    let path = args.file.display();
    if let RunOutcome::Diverged(d) = &result.outcome {
        bail!("{path}: the model drifted: {d}");
    }
    let digest = digest_hex(result.digest);
    let violation = result.violation();
    let reproduced = violation.is_some_and(|v| v.invariant == file.violation.invariant);
    if let (true, Some(v)) = (reproduced, violation) {
        if v.message != file.violation.message || v.step != file.violation.step {
            bail!(
                "{path}: the model drifted: same invariant {}, but at step {} with \"{}\" where the file recorded step {} with \"{}\"",
                v.invariant,
                v.step,
                v.message,
                file.violation.step,
                file.violation.message
            );
        }
        match file.check_digest(result.digest) {
            DigestCheck::Same => {}
            DigestCheck::Drifted { replayed, recorded } => bail!(
                "{path}: the model drifted: same violation, but the trace digest is {replayed}, recorded {recorded}"
            ),
            DigestCheck::Unchecked { format } => eprintln!(
                "note: {path} is a format {format} file, whose trace digest this braid does not \
                 compute: only the violation is checked (`braid shrink {path}` rewrites it in \
                 format {FORMAT_VERSION})"
            ),
        }
    }
    let title = format!(
        "{} ({}/{}{})",
        file.scenario,
        file.model,
        file.variant,
        file.mutant
            .as_deref()
            .map(|g| format!(" without {g}"))
            .unwrap_or_default()
    );
    let caption = Caption {
        title: &title,
        verdict: violation.map(|v| (v.invariant.as_str(), v.message.as_str())),
    };
    if let Some(out) = &args.svg {
        write_atomic(out, render::svg(&trace, &caption).as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    if let Some(out) = &args.html {
        write_atomic(out, render::html(&trace, &caption).as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    match args.format {
        _ if args.mermaid => {
            let diagram = match args.compact {
                true => render::mermaid_compact(&trace, &caption),
                false => render::mermaid(&trace, &caption),
            };
            println!("```mermaid\n{diagram}```");
        }
        Format::Json => {
            let report = ReplayReport {
                format: REPORT_FORMAT,
                file: path.to_string(),
                scenario: &file.scenario,
                model: &file.model,
                variant: &file.variant,
                reproduced,
                violation,
                steps: result.steps,
                preemptions: result.preemptions,
                digest,
                trace: &trace,
            };
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        Format::Text => {
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
                "{} steps, {} preemptions (marked *)\n",
                result.steps, result.preemptions
            );
            print!("{}", trace.render_text());
            println!();
            match violation {
                Some(v) if reproduced => println!(
                    "{}: {} at step {}: {}",
                    colour::verdict("reproduced", true),
                    v.invariant,
                    v.step,
                    v.message
                ),
                Some(v) => println!(
                    "{}: recorded {}, got {} at step {}: {}",
                    colour::verdict("NOT reproduced", false),
                    file.violation.invariant,
                    v.invariant,
                    v.step,
                    v.message
                ),
                None => println!(
                    "{}: the run holds (recorded {})",
                    colour::verdict("NOT reproduced", false),
                    file.violation.invariant
                ),
            }
            // A deadlock's message says who waits on what; this says who holds it.
            let waits = trace.render_wait_for();
            if !waits.is_empty() {
                print!("\nwait-for at the deadlock:\n{waits}");
            }
        }
    }
    // 0: the recorded outcome reproduced exactly; 1: it did not.
    Ok(if reproduced {
        Verdict::Clean
    } else {
        Verdict::Violation
    })
}
