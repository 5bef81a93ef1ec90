//! (c) Every guard of every fixed variant knocked out in turn: a mutant no scenario catches
//! fails the gate. Split across shards by index.

use std::time::Instant;

use anyhow::Result;

use super::inputs::Inputs;
use super::output::{Case, Cases, Kind};
use crate::cli::BudgetArgs;
use crate::commands::mutants::{hunt, plan};

pub fn hunt_all(inputs: &Inputs, cases: &mut Cases) -> Result<()> {
    let budget = BudgetArgs {
        shard: None,
        check_determinism: false,
        ..inputs.budget
    };
    let out = inputs.args.out.join("mutants");
    for (k, (model, variant, guard, group)) in plan(&inputs.scenarios)?.into_iter().enumerate() {
        if crate::interrupt::interrupted() {
            break;
        }
        if !inputs.mine(k) {
            continue;
        }
        let t = Instant::now();
        let r = hunt(&model, &variant, guard, &group, &budget, &out)?;
        let message = match (&r.caught_by, &r.violation) {
            (Some(s), Some(v)) => format!("caught by {s}: {}", v.invariant),
            _ if r.interrupted => "interrupted before a scenario caught it".to_string(),
            _ => format!("survived: no scenario of {model}/{variant} fails without guard {guard}"),
        };
        let name = format!("{model}/{variant} without {guard}");
        cases.push(Case {
            replay: r.violation.map(|v| v.replay_file),
            ..Case::new(Kind::Mutant, name, r.caught, message, t)
        });
    }
    Ok(())
}
