//! (a) The regression corpus: every replay file must still reproduce its recorded violation,
//! with the same trace digest.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use sim::replay_file::{DigestCheck, ReplayFile};
use sim::RunOutcome;

use super::inputs::Inputs;
use super::output::{Case, Cases, Kind};

/// Every replay file under `dir`, loaded (a corrupt one is bad input: exit 2 naming it).
pub fn load(dir: &Path) -> Result<Vec<(PathBuf, ReplayFile)>> {
    // A missing corpus would replay nothing and pass: that is a mistyped path, not a pass.
    if !dir.is_dir() {
        anyhow::bail!("seed corpus {} is not a directory", dir.display());
    }
    json_files(dir)?
        .into_iter()
        .map(|p| {
            let file = ReplayFile::load(&p)?;
            Ok((p, file))
        })
        .collect()
}

/// The `.json` files under `dir`, at any depth, sorted.
pub fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    collect_json(dir, &mut paths)?;
    paths.sort();
    Ok(paths)
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
    Ok(())
}

pub fn replay_all(inputs: &Inputs, cases: &mut Cases) -> Result<()> {
    for (path, file) in &inputs.seed_files {
        if crate::interrupt::interrupted() {
            break;
        }
        cases.push(replay(path, file)?);
    }
    Ok(())
}

fn replay(path: &Path, file: &ReplayFile) -> Result<Case> {
    let t = Instant::now();
    let model =
        models::registry::build_recorded(file).with_context(|| format!("{}", path.display()))?;
    let r = file.follow(model.as_ref(), false);
    let recorded = &file.violation.invariant;
    let (ok, message) = match &r.outcome {
        RunOutcome::Violation(v) if v.invariant == *recorded => match file.check_digest(r.digest) {
            DigestCheck::Same => (true, format!("reproduces {recorded}")),
            DigestCheck::Drifted { replayed, recorded: was } => (
                false,
                format!(
                    "reproduces {recorded} but the trace drifted (digest {replayed}, recorded {was})"
                ),
            ),
            DigestCheck::Unchecked { format } => (
                true,
                format!(
                    "reproduces {recorded} (a format {format} file: its digest is not checked; \
                     `braid shrink` rewrites it)"
                ),
            ),
        },
        RunOutcome::Violation(v) => (
            false,
            format!(
                "recorded {recorded}, now violates {}: {}",
                v.invariant, v.message
            ),
        ),
        RunOutcome::Diverged(d) => (false, format!("the model drifted: {d}")),
        _ => (
            false,
            format!("recorded {recorded} no longer reproduces: the run holds"),
        ),
    };
    Ok(Case {
        replay: Some(path.display().to_string()),
        ..Case::new(Kind::Seed, path.display().to_string(), ok, message, t)
    })
}
