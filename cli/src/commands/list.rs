//! `braid list`: scenarios, then models and their variants; `braid list seeds`: the replay-file
//! corpus. A malformed file is reported and listing goes on; the command then exits 2.

use std::path::Path;

use anyhow::{bail, Result};
use sim::replay_file::ReplayFile;
use sim::scenario::Scenario;

use super::ci::json_files;
use crate::cli::{Cli, ListArgs, ListWhat};
use crate::Exit;

pub fn run(cli: &Cli, args: &ListArgs) -> Result<Exit> {
    let (what, malformed) = match args.what.unwrap_or(ListWhat::Scenarios) {
        ListWhat::Scenarios => ("scenario", scenarios(&cli.scenario_dir()?)?),
        ListWhat::Seeds => (
            "replay file",
            seeds(&crate::cli::default_dir(&args.seeds, "seeds"))?,
        ),
    };
    if malformed > 0 {
        bail!(
            "{malformed} malformed {what}{} (above)",
            if malformed == 1 { "" } else { "s" }
        );
    }
    Ok(Exit::Clean)
}

/// Lists every scenario that loads; returns how many did not.
fn scenarios(dir: &Path) -> Result<usize> {
    let mut loaded = Vec::new();
    let mut malformed = 0;
    for path in Scenario::paths_in(dir)? {
        match Scenario::load(&path) {
            Ok(s) => loaded.push(s),
            Err(e) => {
                eprintln!("error: {e}");
                malformed += 1;
            }
        }
    }
    let name_width = loaded.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let kind = |s: &Scenario| format!("{}/{}", s.model, s.variant);
    let kind_width = loaded.iter().map(|s| kind(s).len()).max().unwrap_or(0);
    println!("scenarios ({}):", dir.display());
    for s in &loaded {
        println!(
            "  {:<name_width$}  {:<kind_width$}  expect {}",
            s.name,
            kind(s),
            s.expected
        );
    }
    println!("models:");
    for m in models::registry::catalog() {
        println!("  {:<10} {}", m.name, m.summary);
        println!("  {:<10} variants: {}", "", m.variants.join(", "));
    }
    Ok(malformed)
}

/// Lists every replay file under `dir` that loads; returns how many did not.
fn seeds(dir: &Path) -> Result<usize> {
    if !dir.is_dir() {
        bail!("seed corpus {} is not a directory", dir.display());
    }
    let mut loaded = Vec::new();
    let mut malformed = 0;
    for path in json_files(dir)? {
        match ReplayFile::load(&path) {
            Ok(f) => loaded.push((path.display().to_string(), f)),
            Err(e) => {
                eprintln!("error: {e}");
                malformed += 1;
            }
        }
    }
    let width = loaded.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
    println!("replay files ({}):", dir.display());
    for (path, f) in &loaded {
        let minimality = f.minimality.map(|m| format!(", {m}")).unwrap_or_default();
        println!(
            "  {path:<width$}  {} {}: {} steps, {}{minimality}",
            f.scenario,
            f.violation.invariant,
            f.steps,
            sim::explore::preemptions(f.preemptions)
        );
    }
    Ok(malformed)
}
