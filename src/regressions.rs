//! Replay files a test already failed on: the one `BRAID_REPLAY` names, and the ones committed
//! beside the test (proptest-style), replayed before any exploration.

use std::path::{Path, PathBuf};

use sim::replay_file::{DigestCheck, ReplayFile};
use sim::RunOutcome;

use crate::failure::{traced_replay, Failure, Source, TestInfo};
use crate::outcome::{Outcome, Regression, Status};
use crate::settings::Settings;
use crate::test_model::TestModel;

/// What `BRAID_REPLAY` asked of this check.
pub(crate) enum Requested {
    /// The file names another test: explore as usual (said in the note).
    Other(String),
    /// The file's replay, as the check's outcome.
    Done(Outcome),
}

/// Replays the file `BRAID_REPLAY` names, if it names this test: exactly, so a trace, message
/// or step other than the recorded ones is drift.
pub(crate) fn replay_requested(model: &TestModel, info: &TestInfo, path: &Path) -> Requested {
    let file = match ReplayFile::load(path) {
        Ok(file) => file,
        Err(e) => return Requested::Done(Outcome::Drifted(format!("BRAID_REPLAY: {e}"))),
    };
    if file.scenario != info.path {
        return Requested::Other(format!(
            "BRAID_REPLAY={} is a schedule of {}, not of {}: exploring as usual",
            path.display(),
            file.scenario,
            info.path
        ));
    }
    let run = traced_replay(model, &file);
    let drift = |why: String| {
        Requested::Done(Outcome::Drifted(format!(
            "{} drifted: {why}; the test changed since the file was written",
            path.display()
        )))
    };
    match &run.outcome {
        RunOutcome::Diverged(d) => drift(d.to_string()),
        RunOutcome::Violation(v) if *v != file.violation => drift(format!(
            "it ends with {} at step {} (\"{}\") where the file recorded {} at step {} (\"{}\")",
            v.invariant,
            v.step,
            v.message,
            file.violation.invariant,
            file.violation.step,
            file.violation.message
        )),
        RunOutcome::Violation(_) => match file.check_digest(run.digest) {
            DigestCheck::Drifted { replayed, recorded } => drift(format!(
                "the same violation, but the trace digest is {replayed} where the file recorded {recorded}"
            )),
            DigestCheck::Same | DigestCheck::Unchecked { .. } => {
                Requested::Done(Outcome::Failed(Box::new(Failure::replayed(info, &file, &run, Ok(path), Source::Replay))))
            }
        },
        RunOutcome::Holds | RunOutcome::Pruned => {
            eprintln!(
                "braid: {} no longer fails: the schedule ran to its end ({} steps)",
                path.display(),
                run.steps
            );
            Requested::Done(Outcome::Holds {
                runs: 1,
                exhaustive: false,
                coverage: format!("the schedule of {}", path.display()),
            })
        }
    }
}

/// Replays every committed regression file of this test, in file-name order.
pub(crate) fn replay_committed(
    model: &TestModel,
    info: &TestInfo,
    settings: &Settings,
) -> Vec<Regression> {
    let Some(dir) = settings.regressions.clone().or_else(|| default_dir(info)) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let status = match ReplayFile::load(&path) {
                Err(e) => Status::Drifted(e.to_string()),
                Ok(file) if file.scenario != info.path => return None,
                Ok(file) => replay_one(model, info, &path, &file),
            };
            Some(Regression { file: path, status })
        })
        .collect()
}

/// A regression file fails again if its schedule breaks the same invariant (the message may
/// have moved with the code); it drifts if the schedule no longer fits.
fn replay_one(model: &TestModel, info: &TestInfo, path: &Path, file: &ReplayFile) -> Status {
    let run = traced_replay(model, file);
    match &run.outcome {
        RunOutcome::Diverged(d) => Status::Drifted(d.to_string()),
        RunOutcome::Violation(v) if v.invariant == file.violation.invariant => {
            Status::FailsAgain(Box::new(Failure::replayed(
                info,
                file,
                &run,
                Ok(path),
                Source::Regression,
            )))
        }
        RunOutcome::Violation(v) => Status::Drifted(format!(
            "it now ends with {} (\"{}\") where the file recorded {}",
            v.invariant, v.message, file.violation.invariant
        )),
        RunOutcome::Holds | RunOutcome::Pruned => Status::Passes,
    }
}

/// `braid-regressions/<file stem>/` beside the test's source file.
fn default_dir(info: &TestInfo) -> Option<PathBuf> {
    if info.file.is_empty() {
        return None;
    }
    let source = Path::new(info.file);
    // `file!()` is relative to the workspace root, cargo runs tests in the package's directory:
    // find the source from the manifest directory up.
    let found = Path::new(info.manifest_dir)
        .ancestors()
        .map(|a| a.join(source))
        .find(|p| p.is_file())?;
    let stem = found.file_stem()?.to_owned();
    Some(found.parent()?.join("braid-regressions").join(stem))
}
