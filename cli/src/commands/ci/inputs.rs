//! Everything `braid ci` checks, loaded and validated before anything runs: the outputs it will
//! write, the seed corpus, the scenarios and their models, and the budget.

use std::path::PathBuf;

use anyhow::{Context, Result};
use sim::replay_file::{check_target, ReplayFile};
use sim::scenario::Scenario;
use sim::Model;

use super::seeds;
use crate::cli::{BudgetArgs, CiArgs, Cli, Shard};
use crate::commands::explore::strategy_for;

pub struct Inputs<'a> {
    pub args: &'a CiArgs,
    /// The seed every scenario is explored with, when not its own.
    pub seed: Option<u64>,
    pub seed_files: Vec<(PathBuf, ReplayFile)>,
    pub scenarios: Vec<Scenario>,
    /// Each scenario's model, in the order of `scenarios`.
    pub models: Vec<Box<dyn Model>>,
    pub budget: BudgetArgs,
}

impl<'a> Inputs<'a> {
    pub fn load(cli: &Cli, args: &'a CiArgs) -> Result<Inputs<'a>> {
        let seed = args.seed;
        for path in args.junit.iter().chain(&args.summary) {
            check_target(path).with_context(|| format!("writing {}", path.display()))?;
        }
        let seed_files = if args.shard.is_none_or(|s| s.index == 1) {
            seeds::load(&crate::cli::default_dir(&args.seeds, "seeds"))?
        } else {
            Vec::new()
        };
        let scenarios = Scenario::load_dir(&cli.scenario_dir()?)?;
        let budget = budget(args, seed);
        let mut models = Vec::new();
        for s in &scenarios {
            let context = || format!("scenario {}", s.path.display());
            models::registry::check_expected(&s.model, &s.expected).with_context(context)?;
            let model =
                models::registry::build(&s.model, &s.variant, &s.params).with_context(context)?;
            // A budget no scenario can be explored with is bad input too.
            strategy_for(s, model.as_ref(), &budget).with_context(context)?;
            models.push(model);
        }
        Ok(Inputs {
            args,
            seed,
            seed_files,
            scenarios,
            models,
            budget,
        })
    }

    /// The scenarios and their models.
    pub fn built(&self) -> impl Iterator<Item = (&Scenario, &dyn Model)> {
        self.scenarios
            .iter()
            .zip(self.models.iter().map(|m| m.as_ref()))
    }

    /// Whether the `k`-th item of a list split across shards (mutants, proofs) is this shard's.
    pub fn mine(&self, k: usize) -> bool {
        self.args
            .shard
            .is_none_or(|Shard { index, count }| k as u64 % count == index - 1)
    }
}

/// The budget of the scenario explorations (b), from which the mutants' and proofs' derive.
fn budget(args: &CiArgs, seed: Option<u64>) -> BudgetArgs {
    BudgetArgs {
        strategy: args.strategy,
        depth: args.depth,
        preemption_bound: None,
        reduction: None,
        no_reduction: false,
        seed,
        runs: args.runs,
        time: args.time,
        check_determinism: true,
        no_shrink: false,
        shrink: args.shrink,
        jobs: None,
        shard: args.shard,
        deepening: None,
        audit_reduction: false,
    }
}
