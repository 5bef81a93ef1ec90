//! A check's outcome as JSON (`BRAID_REPORT=<dir>`): how `braid explore --test` and
//! `braid replay` learn what a test run under `cargo test` found.

use std::path::Path;

use serde::Serialize;

use crate::failure::{Source, TestInfo};
use crate::outcome::{Outcome, Report};

/// The format of these files.
pub(crate) const FORMAT: u32 = 1;

#[derive(Serialize)]
pub(crate) struct OutcomeFile<'a> {
    pub format: u32,
    pub test: &'a str,
    /// `holds`, `failed`, `inconclusive` or `drifted`.
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invariant: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
    /// `explored`, `regression` or `replay`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// A failure's rerun command (its first form, `braid test`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<&'a str>,
}

/// Writes `<dir>/<test path>.json`; a failure to write is said, not fatal (the test's own
/// verdict stands).
pub(crate) fn write(dir: &Path, info: &TestInfo, report: &Report) {
    let mut out = OutcomeFile {
        format: FORMAT,
        test: &info.path,
        outcome: "holds",
        coverage: None,
        runs: None,
        invariant: None,
        message: None,
        source: None,
        file: None,
        rerun: None,
    };
    match &report.outcome {
        Outcome::Holds { runs, coverage, .. } => {
            out.runs = Some(*runs);
            out.coverage = Some(coverage);
        }
        Outcome::Failed(f) => {
            out.outcome = "failed";
            out.invariant = Some(&f.invariant);
            out.message = Some(&f.message);
            out.source = Some(match f.source {
                Source::Explored => "explored",
                Source::Regression => "regression",
                Source::Replay => "replay",
            });
            out.file = f.file.as_ref().map(|p| p.display().to_string());
            out.rerun = f.rerun.lines().next();
        }
        Outcome::Inconclusive(why) => {
            out.outcome = "inconclusive";
            out.message = Some(why);
        }
        Outcome::Drifted(why) => {
            out.outcome = "drifted";
            out.message = Some(why);
        }
    }
    let stem = info.path.replace("::", ".");
    if let Outcome::Failed(f) = &report.outcome {
        if let Some(trace) = &f.run_trace {
            // Beside the outcome: the run as data, for `braid replay`'s pictures.
            write_json(
                &dir.join(format!("{stem}{}", sim::trace::FILE_SUFFIX)),
                trace,
            );
        }
    }
    write_json(&dir.join(format!("{stem}.json")), &out);
}

/// Writes `value` as JSON at `path`; a failure to write is said, not fatal.
fn write_json(path: &Path, value: &impl Serialize) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let written = serde_json::to_vec_pretty(value)
        .map_err(std::io::Error::other)
        .and_then(|json| {
            std::fs::create_dir_all(dir)?;
            sim::replay_file::write_atomic(path, &json)
        });
    if let Err(e) = written {
        eprintln!("braid: cannot write {}: {e}", path.display());
    }
}
