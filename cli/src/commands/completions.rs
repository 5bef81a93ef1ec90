//! `braid completions <shell>`: a completion script for bash, zsh, fish, elvish or PowerShell.

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::Verdict;

pub fn run(args: &CompletionsArgs) -> Result<Verdict> {
    clap_complete::generate(
        args.shell,
        &mut Cli::command(),
        "braid",
        &mut std::io::stdout(),
    );
    Ok(Verdict::Clean)
}
