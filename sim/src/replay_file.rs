//! Replay files: a failing schedule as versioned JSON, written atomically, refused clearly when
//! corrupt, truncated or from a newer braid.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::schedule::Decision;
use crate::shrink::Minimality;
use crate::Violation;

mod strict;
mod write;

pub use write::{check_target, remove_stale_temp_files, write_atomic};

/// The format this braid writes. It reads every format up to this one: a format 1 file
/// replays as before, but its trace digest came from an older hasher and cannot be compared
/// (see `ReplayFile::check_digest`); `braid shrink` rewrites it in the current format.
pub const FORMAT_VERSION: u32 = 2;

/// The first format whose trace digests this braid computes.
const DIGEST_SINCE: u32 = 2;

/// A replay's trace digest against the one recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestCheck {
    /// The replay reproduced the recorded digest: the model is the one the file was written for.
    Same,
    /// The same decisions gave another trace: the model changed under the file.
    Drifted {
        /// The replay's digest, 16 hex digits.
        replayed: String,
        /// The file's digest, 16 hex digits.
        recorded: String,
    },
    /// The file predates this braid's digest: only its violation can be checked.
    Unchecked {
        /// The file's format version.
        format: u32,
    },
}

/// How the schedule was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoundBy {
    /// The strategy's name (as `StrategyKind::name` gives it).
    pub strategy: String,
    /// PCT's bug depth d.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// The seed the strategy ran with.
    pub seed: u64,
    /// The run's index (what the strategy and seed need to make the same run again).
    pub run: u64,
}

/// The size of a schedule before shrinking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShrunkFrom {
    /// Steps in the schedule as found.
    pub steps: usize,
    /// Preemptions in the schedule as found.
    pub preemptions: usize,
}

/// A failing schedule on disk: what model and parameters it ran, how it was found, what it broke,
/// and every decision made, so that `braid replay` follows it step for step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayFile {
    /// `FORMAT_VERSION` when written; a newer one is refused.
    pub format: u32,
    /// The scenario (or test) it was found in.
    pub scenario: String,
    /// The model it runs.
    pub model: String,
    /// The model's variant.
    pub variant: String,
    /// The guard knocked out, when the schedule was found on a mutant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant: Option<String>,
    /// The scenario's parameters, as given to the model (so a replay builds the same model).
    pub params: serde_json::Value,
    /// The grain the schedule ran at, when it is not the model's own (a grain check's finding
    /// on a coarse-grain model: replayed at access grain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grain: Option<crate::Grain>,
    /// The step limit the run had (a replay keeps it, so a cut run is cut in the same place).
    pub max_steps: usize,
    /// How the schedule was found (strategy, seed, run index).
    pub found: FoundBy,
    /// The invariant the schedule breaks; a replay must break it again.
    #[serde(deserialize_with = "recorded_violation")]
    pub violation: Violation,
    /// Steps in the (minimised) schedule.
    pub steps: usize,
    /// Preemptions in the (minimised) schedule.
    pub preemptions: usize,
    /// What shrinking proved of `preemptions`: `minimum` (no schedule with fewer breaks this
    /// invariant) or `1-minimal` (no single preemption can go; fewer not ruled out). Absent
    /// when the schedule was not shrunk, and in files from before braid recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimality: Option<Minimality>,
    /// The size of the schedule as found, before minimisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<ShrunkFrom>,
    /// The trace digest, 16 hex digits: a replay must reproduce it exactly.
    pub digest: String,
    /// The decision at each scheduling point, in order: the schedule itself.
    pub decisions: Vec<Decision>,
}

/// Why a replay file could not be read.
#[derive(Debug, Error)]
pub enum ReplayFileError {
    /// The file could not be read.
    #[error("{path}: cannot read replay file: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Not a `source`: the message carries it, so a report that prints the chain of
        /// causes does not print it twice.
        error: std::io::Error,
    },
    /// The file is not a replay file this braid can read: bad JSON, a missing or unknown
    /// field, truncated.
    #[error("{path}: corrupt replay file: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file is from a newer braid.
    #[error("{path}: replay file format {found} is newer than this braid reads ({FORMAT_VERSION}); upgrade braid")]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// Its format version.
        found: u64,
    },
}

/// A trace digest as a replay file writes it: 16 hex digits.
pub fn digest_hex(digest: u64) -> String {
    format!("{digest:016x}")
}

impl ReplayFile {
    /// Follows the file's decisions strictly on `model`, once, with a trace if asked: what
    /// `replay`, `shrink`, `ci` and the checks do with a replay file.
    pub fn follow(&self, model: &dyn crate::Model, trace: bool) -> crate::RunResult {
        let config = crate::RunConfig {
            max_steps: self.max_steps,
            trace,
            record_accesses: false,
        };
        let replay = Box::new(
            crate::strategy::Replay::strict(self.decisions.clone())
                .watching_states(model.state_visible()),
        );
        crate::run_once(model, replay, self.found.run, &config).0
    }

    /// Reads and checks a replay file: refuses one that is corrupt, truncated or of a newer format.
    pub fn load(path: &Path) -> Result<ReplayFile, ReplayFileError> {
        let text = std::fs::read_to_string(path).map_err(|error| ReplayFileError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let corrupt = |message: String| ReplayFileError::Corrupt {
            path: path.to_path_buf(),
            message,
        };
        strict::check_no_duplicate_keys(&text).map_err(|e| corrupt(e.to_string()))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        let format = value
            .get("format")
            .and_then(|f| f.as_u64())
            .ok_or_else(|| corrupt("no format version".into()))?;
        if format == 0 {
            return Err(corrupt(format!(
                "format 0 is not a replay file format (this braid reads 1 to {FORMAT_VERSION})"
            )));
        }
        if format > u64::from(FORMAT_VERSION) {
            return Err(ReplayFileError::NewerFormat {
                path: path.to_path_buf(),
                found: format,
            });
        }
        let file: ReplayFile = serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        if file.digest.len() != 16 || u64::from_str_radix(&file.digest, 16).is_err() {
            return Err(corrupt(format!(
                "digest '{}' is not 16 hex digits",
                file.digest
            )));
        }
        Ok(file)
    }

    /// Compares `digest`, a replay's, with the recorded one.
    pub fn check_digest(&self, digest: u64) -> DigestCheck {
        let replayed = digest_hex(digest);
        if self.format < DIGEST_SINCE {
            DigestCheck::Unchecked {
                format: self.format,
            }
        } else if replayed == self.digest {
            DigestCheck::Same
        } else {
            DigestCheck::Drifted {
                replayed,
                recorded: self.digest.clone(),
            }
        }
    }

    /// `<dir>/<scenario>/<invariant>-<first 8 digest digits>.json`: the same schedule found twice
    /// is one file.
    pub fn default_path(&self, dir: &Path) -> PathBuf {
        let scenario = match &self.mutant {
            Some(guard) => format!("{}-without-{guard}", self.scenario),
            None => self.scenario.clone(),
        };
        dir.join(scenario).join(format!(
            "{}-{}.json",
            self.violation.invariant,
            &self.digest[..8]
        ))
    }

    /// Writes the file atomically: a temporary file in the same directory, then a rename (see
    /// [`write_atomic`]).
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        let mut json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        json.push('\n');
        write_atomic(path, json.as_bytes())
    }
}

/// A recorded violation, read strictly: a key braid does not write is an error, not ignored.
fn recorded_violation<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Violation, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Recorded {
        invariant: String,
        message: String,
        step: usize,
    }
    let r = Recorded::deserialize(d)?;
    Ok(Violation {
        invariant: r.invariant,
        message: r.message,
        step: r.step,
    })
}
