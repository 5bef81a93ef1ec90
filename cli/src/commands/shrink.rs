//! `braid shrink`: minimise an existing replay file's schedule, in place. In order: the file's
//! run is replayed and must reproduce what it recorded, the schedule is shrunk, the before and
//! after are printed, and the file is rewritten with the shrunk schedule.

use anyhow::{bail, Context, Result};
use sim::replay_file::{digest_hex, DigestCheck, ReplayFile, ShrunkFrom, FORMAT_VERSION};
use sim::shrink::{shrink_with, Shrunk};
use sim::{RunConfig, RunOutcome, RunResult, Violation};

use crate::cli::ShrinkArgs;
use crate::Exit;

pub fn run(args: &ShrinkArgs) -> Result<Exit> {
    let mut file = ReplayFile::load(&args.file)?;
    let path = args.file.display().to_string();
    let model = models::registry::build_recorded(&file).with_context(|| path.clone())?;
    let config = RunConfig {
        max_steps: file.max_steps,
        trace: false,
        record_accesses: false,
    };
    let found = file.follow(model.as_ref(), false);
    check_reproduces(&file, &found, &path)?;
    let options = args.shrink.options().map_err(anyhow::Error::msg)?;
    let shrunk = shrink_with(model.as_ref(), &found, &config, options);
    print_summary(&path, &found, &shrunk);
    rewrite(&mut file, &found, shrunk);
    file.write_atomic(&args.file)
        .with_context(|| format!("writing {path}"))?;
    Ok(Exit::Clean)
}

/// The run must break the recorded invariant as recorded: a drifted file is not shrunk.
fn check_reproduces(file: &ReplayFile, found: &RunResult, path: &str) -> Result<()> {
    match &found.outcome {
        RunOutcome::Diverged(d) => bail!("{path}: the model drifted: {d}"),
        RunOutcome::Violation(v) if v.invariant == file.violation.invariant => {
            check_not_drifted(file, found, v, path)
        }
        _ => bail!(
            "{path}: the recorded violation {} no longer reproduces; nothing to shrink",
            file.violation.invariant
        ),
    }
}

/// A file `replay` and `ci` reject as drifted is not silently rewritten here: the schedule it
/// holds no longer tells the story it recorded. (A format 1 file, whose digest this braid does
/// not compute, is what `shrink` upgrades.)
fn check_not_drifted(
    file: &ReplayFile,
    found: &RunResult,
    v: &Violation,
    path: &str,
) -> Result<()> {
    if let DigestCheck::Drifted { replayed, recorded } = file.check_digest(found.digest) {
        bail!(
            "{path}: the model drifted: same violation, but the trace digest is {replayed}, \
             recorded {recorded}; re-record it with `braid explore`"
        );
    }
    if v.message != file.violation.message || v.step != file.violation.step {
        bail!(
            "{path}: the model drifted: {} now at step {} with \"{}\", recorded at step {} \
             with \"{}\"; re-record it with `braid explore`",
            v.invariant,
            v.step,
            v.message,
            file.violation.step,
            file.violation.message
        );
    }
    Ok(())
}

/// "FILE: 40 steps, 6 preemptions -> 22 steps, 2 preemptions, minimum (...)".
fn print_summary(path: &str, found: &RunResult, shrunk: &Shrunk) {
    let run = &shrunk.run;
    println!(
        "{path}: {} steps, {} -> {} steps, {}, {}{} ({} guided runs, {} DFS runs)",
        found.steps,
        sim::explore::preemptions(found.preemptions),
        run.steps,
        sim::explore::preemptions(run.preemptions),
        shrunk.minimality,
        if shrunk.timed_out {
            " (the search below ran out of time)"
        } else {
            ""
        },
        shrunk.attempts,
        shrunk.dfs_runs
    );
}

/// The file with the shrunk schedule, keeping the size it was first found at.
fn rewrite(file: &mut ReplayFile, found: &RunResult, shrunk: Shrunk) {
    let run = shrunk.run;
    file.shrunk_from.get_or_insert(ShrunkFrom {
        steps: found.steps,
        preemptions: found.preemptions,
    });
    file.violation = run
        .violation()
        .cloned()
        .expect("shrinking keeps the violation");
    file.steps = run.steps;
    file.preemptions = run.preemptions;
    file.minimality = Some(shrunk.minimality);
    // Written in this braid's format, with its digest.
    file.format = FORMAT_VERSION;
    file.digest = digest_hex(run.digest);
    file.decisions = run.decisions();
}
