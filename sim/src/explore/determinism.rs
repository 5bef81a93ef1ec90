//! The determinism re-check (`Explorer::check_determinism`): a sample of runs is run again from
//! scratch and replayed from its decisions, and any difference in the trace digest fails the
//! exploration: a model that depends on something the engine does not control would make the
//! seeds it reports unreplayable.

use super::{ExploreError, Explorer};
use crate::run::{run_once, RunConfig, RunResult};
use crate::strategy::{Replay, StrategyKind};

/// Runs sampled for a determinism check: the first few, and each first failure.
const DETERMINISM_SAMPLE: u64 = 32;

impl Explorer<'_> {
    /// Whether run `run` is in the determinism check's sample (with it on): one of the first
    /// `DETERMINISM_SAMPLE` of this exploration's runs, or the first failure of an invariant.
    pub(super) fn checks_run(&self, run: u64, new_violation: bool) -> bool {
        self.check_determinism
            && ((run - self.part.first_run) / self.part.stride < DETERMINISM_SAMPLE
                || new_violation)
    }

    /// Runs `run` again from scratch and by replaying its decisions; both must match.
    pub(super) fn check_run(
        &self,
        run: u64,
        first: &RunResult,
        steps_estimate: usize,
        config: &RunConfig,
    ) -> Result<(), ExploreError> {
        // A seeded run reproduces alone; a DFS run is defined by its path (checked by replay).
        let fresh = if self.strategy.is_exhaustive() || self.strategy == StrategyKind::Default {
            first.clone()
        } else {
            let strategy = self.strategy.build(self.seed, steps_estimate);
            run_once(self.model, strategy, run, config).0
        };
        if fresh.digest != first.digest {
            return Err(ExploreError::Nondeterministic {
                run,
                first: first.digest,
                second: fresh.digest,
                how: "re-run from its seed",
            });
        }
        let replayed = run_once(
            self.model,
            Box::new(Replay::strict(first.decisions()).watching_states(self.model.state_visible())),
            run,
            config,
        )
        .0;
        if replayed.digest != first.digest {
            return Err(ExploreError::Nondeterministic {
                run,
                first: first.digest,
                second: replayed.digest,
                how: "replayed from its decisions",
            });
        }
        Ok(())
    }
}
