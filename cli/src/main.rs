//! `braid`: explore, replay and explain message-delivery races in models of real systems.

mod cli;
mod colour;
mod commands;
mod interrupt;
mod report;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

/// How a command ended, as its exit code (named apart from `sim::check::Verdict`, a check's
/// result). `explore`, `mutants`, `ci`: 0 every outcome as expected, 1 an outcome not as
/// expected; `replay`: 0 the recorded violation reproduced exactly, 1 it did not; 2 bad input
/// (a malformed scenario or replay file, an unknown name, a drifted model) everywhere; `shrink`
/// exits 0 once it has rewritten the file.
pub enum Exit {
    /// Every outcome as expected (exit 0).
    Clean,
    /// An outcome not as expected (exit 1).
    Violation,
    /// Stopped by Ctrl-C after reporting what it found (exit 130).
    Interrupted,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !sim::SIMULATED {
        eprintln!(
            "error: braid was built without `--cfg madsim`, so it cannot control scheduling. \
             An exported RUSTFLAGS replaces .cargo/config.toml: unset it, or add `--cfg madsim` to it."
        );
        return ExitCode::from(2);
    }
    let result = match &cli.command {
        Command::List(args) => commands::list::run(&cli, args),
        Command::Explore(args) => commands::explore::run(&cli, args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Shrink(args) => commands::shrink::run(args),
        Command::Mutants(args) => commands::mutants::run(&cli, args),
        Command::Ci(args) => commands::ci::run(&cli, args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Completions(args) => commands::completions::run(args),
        Command::Test(args) => commands::cargo_test::test(args),
    };
    match result {
        Ok(Exit::Clean) => ExitCode::SUCCESS,
        Ok(Exit::Violation) => ExitCode::from(1),
        Ok(Exit::Interrupted) => ExitCode::from(interrupt::EXIT_CODE),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
