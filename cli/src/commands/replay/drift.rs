//! Holding a replayed run to its recording: a run that no longer follows the file's decisions,
//! or that breaks the recorded invariant some other way, has drifted, which is bad input (exit 2)
//! rather than a verdict.

use anyhow::{bail, Result};
use sim::replay_file::{DigestCheck, ReplayFile, FORMAT_VERSION};
use sim::{RunOutcome, RunResult, Violation};

/// Whether the run broke the invariant the file recorded; an error if it drifted.
pub(super) fn reproduced(file: &ReplayFile, result: &RunResult, path: &str) -> Result<bool> {
    if let RunOutcome::Diverged(d) = &result.outcome {
        bail!("{path}: the model drifted: {d}");
    }
    let violation = result.violation();
    let reproduced = violation.is_some_and(|v| v.invariant == file.violation.invariant);
    if let (true, Some(v)) = (reproduced, violation) {
        same_violation(file, v, path)?;
        same_digest(file, result, path)?;
    }
    Ok(reproduced)
}

/// The recorded invariant must break at the recorded step, with the recorded message.
fn same_violation(file: &ReplayFile, v: &Violation, path: &str) -> Result<()> {
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
    Ok(())
}

/// The run's trace digest must be the recorded one (a format 1 file records none: a note).
fn same_digest(file: &ReplayFile, result: &RunResult, path: &str) -> Result<()> {
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
    Ok(())
}
