//! The check a coarse grain owes (`Grain::Await`): a search at await grain cannot see races
//! between atomic accesses, so after it holds, a short portfolio search at access grain looks
//! for what the coarse grain hid.

use super::{ExploreError, Explorer, Found};
use crate::model::Model;
use crate::strategy::StrategyKind;

/// Runs per grain check (see `grain_check`).
pub const GRAIN_CHECK_RUNS: u64 = 2_000;

/// The check a coarse grain owes: a model that runs at `Grain::Await` skips the races between
/// atomic accesses, so after its search holds, `runs` portfolio runs of it at access grain
/// look for what the coarse grain hides. Returns the first violation they find, its message
/// naming both grains (`None` for a model already at access grain).
pub fn grain_check(
    model: &dyn Model,
    seed: u64,
    runs: u64,
    max_steps: usize,
) -> Result<Option<Found>, ExploreError> {
    if model.grain() == crate::model::Grain::Access {
        return Ok(None);
    }
    let fine = crate::model::AtGrain {
        model,
        grain: crate::model::Grain::Access,
    };
    let summary = Explorer::new(&fine)
        .strategy(StrategyKind::Portfolio)
        .seed(seed)
        .runs(runs)
        .max_steps(max_steps)
        .stop_on_first(true)
        .run()?;
    Ok(summary.violations.into_iter().next().map(|f| Found {
        message: format!(
            "{} (found at access grain by the grain check: the model runs at {} grain, which hides it)",
            f.message,
            model.grain().name()
        ),
        ..f
    }))
}
