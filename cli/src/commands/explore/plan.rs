//! How one scenario is explored: its strategy, seed and budget (the command line's over the
//! scenario's), this shard's part of the run space, and the explorer built from them.

use std::time::Duration;

use anyhow::Result;
use sim::explore::Explorer;
use sim::scenario::Scenario;
use sim::strategy::{Reduction, StrategyKind};

use crate::cli::BudgetArgs;
use crate::interrupt;

/// Pruned branches the reduction audit re-explores (a seeded sample).
const AUDITED_BRANCHES: usize = 32;

pub struct Plan {
    pub strategy: StrategyKind,
    pub seed: u64,
    pub time: Option<Duration>,
    /// The whole exploration's run budget, before sharding.
    pub unsharded_runs: Option<u64>,
    /// This shard's: run indices `first_run`, `first_run + stride`, ... (DFS: subtrees).
    pub runs: Option<u64>,
    pub first_run: u64,
    pub stride: u64,
}

impl Plan {
    pub fn new(scenario: &Scenario, model: &dyn sim::Model, args: &BudgetArgs) -> Result<Plan> {
        let defaults = &scenario.explore;
        let strategy = strategy_for(scenario, model, args)?;
        let time = match args.time {
            Some(t) if !(t.is_finite() && t > 0.0) => {
                anyhow::bail!("--time must be a positive number of seconds")
            }
            Some(t) => Some(Duration::from_secs_f64(t)),
            None => defaults.time.map(Duration::from_secs),
        };
        let runs = match (args.runs, time) {
            (Some(r), _) => Some(r),
            (None, Some(_)) if args.time.is_some() => None,
            // DFS runs until the bounded space is exhausted unless a budget is given.
            (None, _) if strategy.is_exhaustive() => None,
            (None, _) => Some(defaults.runs),
        };
        // Shard i of n takes run indices i-1, i-1+n, ... (DFS: subtrees i-1, i-1+n, ...): the
        // shards' union is the unsharded run set.
        let (first_run, stride, shard_runs) = match args.shard {
            None => (0, 1, runs),
            Some(shard) => (shard.index - 1, shard.count, runs.map(|r| shard.share(r))),
        };
        Ok(Plan {
            strategy,
            seed: args.seed.unwrap_or(defaults.seed),
            time,
            unsharded_runs: runs,
            runs: shard_runs,
            first_run,
            stride,
        })
    }

    /// The explorer for `model` (progress reporting aside).
    pub fn explorer<'m>(
        &self,
        model: &'m dyn sim::Model,
        scenario: &Scenario,
        args: &BudgetArgs,
    ) -> Explorer<'m> {
        let jobs = args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let mut explorer = Explorer::new(model)
            .strategy(self.strategy)
            .seed(self.seed)
            .max_steps(scenario.explore.max_steps)
            .first_run(self.first_run)
            .stride(self.stride)
            .jobs(jobs)
            .check_determinism(args.check_determinism);
        if let Some(r) = self.runs {
            explorer = explorer.runs(r);
        }
        if let Some(t) = self.time {
            explorer = explorer.time(t);
        }
        if let Some(on) = args.deepening {
            explorer = explorer.deepening(on);
        }
        if args.audit_reduction {
            explorer = explorer.audit(AUDITED_BRANCHES);
        }
        if let Some(flag) = interrupt::flag() {
            explorer = explorer.cancel_on(flag);
        }
        explorer
    }
}

/// The strategy `scenario` is explored with: the command line's settings over the scenario's.
pub fn strategy_for(
    scenario: &Scenario,
    model: &dyn sim::Model,
    args: &BudgetArgs,
) -> Result<StrategyKind> {
    let defaults = &scenario.explore;
    let name = match args.strategy {
        Some(s) => s.into(),
        None => defaults.strategy.parse().map_err(anyhow::Error::msg)?,
    };
    sim::scenario::strategy(
        name,
        args.depth.unwrap_or(defaults.depth),
        args.preemption_bound
            .map_or(defaults.preemption_bound, |b| b.0),
        if args.no_reduction {
            Some(Reduction::None)
        } else {
            args.reduction
        },
        model.state_visible(),
    )
    .map_err(anyhow::Error::msg)
}
