//! `braid completions <shell>`: a completion script for bash, zsh, fish, elvish or PowerShell.

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::Exit;

pub fn run(args: &CompletionsArgs) -> Result<Exit> {
    clap_complete::generate(
        args.shell,
        &mut Cli::command(),
        "braid",
        &mut std::io::stdout(),
    );
    Ok(Exit::Clean)
}
