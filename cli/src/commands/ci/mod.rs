//! `braid ci`: the pull-request gate. In order, and stopping nothing early:
//! (a) every replay file under seeds/ must still reproduce its recorded violation (`seeds`);
//! (b) every scenario is explored with its budget and checked against its expectation — a new
//!     violation is written as a shrunk replay file and explained with its replay command and a
//!     Mermaid diagram (`scenarios`, `explain`);
//! (c) every guard of every fixed variant is knocked out and must be caught (`mutants`);
//! (d) a sample of schedules of every scenario is re-run, and any trace difference fails
//!     (checked during (b));
//! (e) every fixed scenario is proved by DFS: exhaustive, no violation (`proofs`).
//! Bad input is found first (`inputs`); the outputs — text or JSON on stdout, JUnit, Markdown —
//! are built from the cases at the end (`output`). Exit 0 only when every expectation holds; 1
//! when one does not; 2 on bad input.
//!
//! Ctrl-C, as in `braid explore`: the first stops the check under way between runs (what its
//! exploration found is written as found), skips the checks after it, writes the outputs of
//! the cases so far and prints the summary, and exits 130; the second exits at once.

mod explain;
mod inputs;
mod junit;
mod markdown;
mod mutants;
mod output;
mod proofs;
mod scenarios;
mod seeds;

use std::time::Instant;

use anyhow::Result;

use crate::cli::{CiArgs, Cli};
use crate::{interrupt, Exit};
use output::Cases;
pub use seeds::json_files;

pub fn run(cli: &Cli, args: &CiArgs) -> Result<Exit> {
    let start = Instant::now();
    let inputs = inputs::Inputs::load(cli, args)?;
    interrupt::install();
    let mut cases = Cases::new(args.format);
    seeds::replay_all(&inputs, &mut cases)?;
    let determinism = scenarios::explore_all(&inputs, &mut cases)?;
    mutants::hunt_all(&inputs, &mut cases)?;
    if !interrupt::interrupted() {
        cases.push(determinism.case());
    }
    proofs::prove_all(&inputs, &mut cases)?;
    output::finish(args, &inputs, cases, determinism.checked(), start.elapsed())
}
