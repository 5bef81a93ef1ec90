//! What `braid ci` reports: one case per check, printed as it completes (stdout in text mode,
//! stderr beside JSON, so that stdout stays one JSON document), then the summary on stdout and
//! the JUnit and Markdown files.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;
use sim::replay_file::write_atomic;

use super::inputs::Inputs;
use super::{junit, markdown};
use crate::cli::{CiArgs, Format};
use crate::colour;
use crate::report::REPORT_FORMAT;
use crate::Exit;

/// Which phase a case belongs to (a JUnit test suite).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Seed,
    Scenario,
    Mutant,
    Determinism,
    Proof,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Seed => "seed",
            Kind::Scenario => "scenario",
            Kind::Mutant => "mutant",
            Kind::Determinism => "determinism",
            Kind::Proof => "proof",
        }
    }

    /// What a failure of this kind is (a JUnit failure's `type`).
    pub fn failure_type(self) -> &'static str {
        match self {
            Kind::Seed => "seed-regressed",
            Kind::Scenario => "expectation-not-met",
            Kind::Mutant => "mutant-survived",
            Kind::Determinism => "nondeterminism",
            Kind::Proof => "proof-failed",
        }
    }
}

/// A violation no scenario expected: what a reviewer needs to see it.
#[derive(Serialize)]
pub struct NewViolation {
    pub scenario: String,
    pub invariant: String,
    pub message: String,
    pub replay: String,
    /// A Mermaid sequence diagram of the run.
    pub mermaid: String,
}

#[derive(Serialize)]
pub struct Case {
    pub kind: Kind,
    pub name: String,
    pub ok: bool,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_violation: Option<NewViolation>,
    pub seconds: f64,
}

impl Case {
    pub fn new(kind: Kind, name: String, ok: bool, message: String, start: Instant) -> Case {
        Case {
            kind,
            name,
            ok,
            message,
            replay: None,
            new_violation: None,
            seconds: start.elapsed().as_secs_f64(),
        }
    }
}

/// The cases so far, each printed as it comes.
pub struct Cases {
    format: Format,
    cases: Vec<Case>,
}

impl Cases {
    pub fn new(format: Format) -> Cases {
        Cases {
            format,
            cases: Vec::new(),
        }
    }

    pub fn push(&mut self, case: Case) {
        let text = progress(&case);
        match self.format {
            Format::Text => print!("{text}"),
            Format::Json => eprint!("{text}"),
        }
        self.cases.push(case);
    }
}

fn progress(c: &Case) -> String {
    let status = colour::verdict(if c.ok { "ok  " } else { "FAIL" }, c.ok);
    let mut text = format!(
        "{status} {:<12} {:<56} {}\n",
        c.kind.name(),
        c.name,
        c.message
    );
    if let (false, Some(file)) = (c.ok, &c.replay) {
        text += &format!("     reproduce: braid replay {file}\n");
    }
    if let Some(v) = &c.new_violation {
        text += &format!(
            "\nNEW VIOLATION in {}: {}: {}\nreproduce: braid replay {}\n\n```mermaid\n{}```\n\n",
            v.scenario, v.invariant, v.message, v.replay, v.mermaid
        );
    }
    text
}

#[derive(Serialize)]
pub struct CiReport<'a> {
    /// `REPORT_FORMAT`.
    pub format: u32,
    pub seed: Option<u64>,
    pub shard: Option<String>,
    pub passed: usize,
    pub failed: usize,
    pub determinism_checked: u64,
    pub elapsed_ms: f64,
    /// Stopped by Ctrl-C: the cases so far, the rest not run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    pub cases: &'a [Case],
}

/// Writes the JUnit and Markdown files, prints the summary, and gives the verdict.
pub fn finish(
    args: &CiArgs,
    inputs: &Inputs,
    cases: Cases,
    determinism_checked: u64,
    elapsed: Duration,
) -> Result<Exit> {
    let cases = cases.cases;
    let failed = cases.iter().filter(|c| !c.ok).count();
    let report = CiReport {
        format: REPORT_FORMAT,
        seed: inputs.seed,
        shard: args.shard.map(|s| format!("{}/{}", s.index, s.count)),
        passed: cases.len() - failed,
        failed,
        determinism_checked,
        elapsed_ms: elapsed.as_secs_f64() * 1e3,
        interrupted: crate::interrupt::interrupted(),
        cases: &cases,
    };
    if let Some(path) = &args.junit {
        write_atomic(path, junit::render(&cases)?.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.summary {
        write_atomic(path, markdown::render(&report).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => println!("\n{}", headline(&report)),
    }
    Ok(if report.interrupted {
        Exit::Interrupted
    } else if failed > 0 {
        Exit::Violation
    } else {
        Exit::Clean
    })
}

pub fn headline(r: &CiReport) -> String {
    let interrupted = match r.interrupted {
        true => "INTERRUPTED: the checks after the last case were not run; ",
        false => "",
    };
    format!(
        "braid ci: {interrupted}{} passed, {} failed, {} schedules re-run for determinism, {:.1}s",
        r.passed,
        r.failed,
        r.determinism_checked,
        r.elapsed_ms / 1e3
    )
}
