//! `braid list`: scenarios, then models and their variants.

use anyhow::Result;
use sim::scenario::Scenario;

use crate::cli::Cli;
use crate::Verdict;

pub fn run(cli: &Cli) -> Result<Verdict> {
    let scenarios = Scenario::load_dir(&cli.scenario_dir)?;
    println!("scenarios ({}):", cli.scenario_dir.display());
    for s in &scenarios {
        println!(
            "  {:<36} {}/{:<16} expect {}",
            s.name, s.model, s.variant, s.expected
        );
    }
    println!("models:");
    for m in models::registry::catalog() {
        println!("  {:<10} {}", m.name, m.summary);
        println!("  {:<10} variants: {}", "", m.variants.join(", "));
    }
    Ok(Verdict::Clean)
}
