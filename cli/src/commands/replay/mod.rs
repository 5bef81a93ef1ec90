//! `braid replay`: follow a replay file's decisions, print the trace, and say whether the
//! recorded violation reproduced. Exit 1 if it violates, 0 if it holds, 2 on bad input or drift.
//!
//! In order: the outputs are checked writable, the file is loaded and its run replayed, the run
//! is held to what the file recorded (`drift`), the pictures are written, and the run is printed
//! (`print`).

mod drift;
mod print;

use std::path::Path;

use anyhow::{Context, Result};
use sim::render::{self, Caption};
use sim::replay_file::{check_target, write_atomic, ReplayFile};
use sim::trace::Trace;
use sim::RunResult;

use crate::cli::ReplayArgs;
use crate::Exit;

/// A replay file's run, and whether it reproduced the violation the file recorded.
struct Replayed {
    file: ReplayFile,
    /// The file's path, as messages name it.
    path: String,
    result: RunResult,
    trace: Trace,
    reproduced: bool,
}

pub fn run(args: &ReplayArgs) -> Result<Exit> {
    // An output braid may not write is bad input, said before anything runs.
    for out in args.svg.iter().chain(&args.html) {
        check_target(out).with_context(|| format!("writing {}", out.display()))?;
    }
    let file = ReplayFile::load(&args.file)?;
    if file.model == super::cargo_test::TEST_MODEL {
        return super::cargo_test::replay(&file, args);
    }
    let replayed = replay(file, &args.file)?;
    let title = title(&replayed.file);
    let caption = caption(&title, &replayed);
    write_pictures(args, &replayed.trace, &caption)?;
    print::print(args, &replayed, &caption)?;
    // 0: the recorded outcome reproduced exactly; 1: it did not.
    Ok(if replayed.reproduced {
        Exit::Clean
    } else {
        Exit::Violation
    })
}

/// Run the file's decisions strictly, with a trace, and check the run against the recording.
fn replay(file: ReplayFile, path: &Path) -> Result<Replayed> {
    let path = path.display().to_string();
    let model = models::registry::build_recorded(&file).with_context(|| path.clone())?;
    let result = file.follow(model.as_ref(), true);
    let trace = result.trace.clone().unwrap_or_default();
    let reproduced = drift::reproduced(&file, &result, &path)?;
    Ok(Replayed {
        file,
        path,
        result,
        trace,
        reproduced,
    })
}

/// The SVG and HTML pictures asked for, each said on stderr once written (with the directory
/// it made, if its directory did not exist).
fn write_pictures(args: &ReplayArgs, trace: &Trace, caption: &Caption<'_>) -> Result<()> {
    let pictures = [
        (&args.svg, render::svg as fn(&Trace, &Caption<'_>) -> String),
        (&args.html, render::html),
    ];
    for (out, draw) in pictures {
        let Some(out) = out else { continue };
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
        let made = dir.filter(|d| !d.exists());
        write_atomic(out, draw(trace, caption).as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        match made {
            Some(d) => eprintln!("braid: wrote {} (made {})", out.display(), d.display()),
            None => eprintln!("braid: wrote {}", out.display()),
        }
    }
    Ok(())
}

/// The pictures of a test's replay file, from the run its test reported (`trace`: `None` when
/// the schedule no longer fails: nothing is drawn, and that is said).
pub fn draw_test(args: &ReplayArgs, file: &ReplayFile, trace: Option<&Trace>) -> Result<()> {
    if args.svg.is_none() && args.html.is_none() && !args.mermaid {
        return Ok(());
    }
    let Some(trace) = trace else {
        eprintln!(
            "braid: nothing drawn: the test did not fail on {}'s schedule",
            args.file.display()
        );
        return Ok(());
    };
    let caption = Caption {
        title: &file.scenario,
        verdict: Some((&file.violation.invariant, &file.violation.message)),
    };
    write_pictures(args, trace, &caption)?;
    if args.mermaid {
        print::mermaid_of(trace, &caption, args.compact);
    }
    Ok(())
}

/// "scenario (model/variant)", with the guard a mutant knocks out.
fn title(file: &ReplayFile) -> String {
    format!(
        "{} ({}/{}{})",
        file.scenario,
        file.model,
        file.variant,
        file.mutant
            .as_deref()
            .map(|g| format!(" without {g}"))
            .unwrap_or_default()
    )
}

/// A picture's caption: the title, and the violation the run ended in, if any.
fn caption<'a>(title: &'a str, replayed: &'a Replayed) -> Caption<'a> {
    Caption {
        title,
        verdict: replayed
            .result
            .violation()
            .map(|v| (v.invariant.as_str(), v.message.as_str())),
    }
}
