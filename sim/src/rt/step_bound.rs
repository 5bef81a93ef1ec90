//! When a run that does not end is cut, and what it is called then.
//!
//! A livelock is a cycle without progress, not a step count. What the engine can tell cheaply
//! is whether tasks are going round in yields: a run still yielding, over and over, for the
//! last half of `max_steps` is cut there as a `livelock` (under a fair schedule a yield cycle
//! only runs that long when nobody gets anywhere). A run that is long without yielding (one
//! task doing 10,000 channel operations, a long computation between awaits) is not a livelock:
//! it goes on, up to `LONG_RUN_FACTOR` times the bound, and only a run past that is cut as a
//! `step-bound` (an endless loop that never yields, or a run braid will not follow further).
//! The factor keeps an endless straight-line loop affordable: 10^6 steps is about a second.

/// How many times `max_steps` a run that does not yield may go on before it is cut.
pub const LONG_RUN_FACTOR: usize = 100;

/// The bound on one run's length, and the yields it has seen.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepBound {
    max_steps: usize,
    /// The step of the last yield, and of the first yield of the stretch of yields it ends
    /// (yields less than half a bound apart).
    last_yield: Option<usize>,
    streak_start: usize,
}

impl StepBound {
    /// A bound of `max_steps` steps, no yield seen yet.
    pub fn new(max_steps: usize) -> Self {
        StepBound {
            max_steps,
            last_yield: None,
            streak_start: 0,
        }
    }

    fn window(&self) -> usize {
        (self.max_steps / 2).max(1)
    }

    /// A task yielded at `step`.
    pub fn yielded(&mut self, step: usize) {
        let apart = self
            .last_yield
            .is_none_or(|last| step - last > self.window());
        if apart {
            self.streak_start = step;
        }
        self.last_yield = Some(step);
    }

    /// At `step`, whether the run is cut: its invariant and message.
    pub fn cut(&self, step: usize) -> Option<(&'static str, String)> {
        if step < self.max_steps {
            return None;
        }
        let since = step - self.window();
        let yielding = self
            .last_yield
            .is_some_and(|last| last >= since && self.streak_start <= since);
        if yielding {
            return Some((
                "livelock",
                format!(
                    "run went past {step} steps with tasks yielding to each other for the last {} of them: a fair schedule that makes no progress",
                    self.window()
                ),
            ));
        }
        let cap = self.max_steps.saturating_mul(LONG_RUN_FACTOR);
        (step >= cap).then(|| {
            (
                "step-bound",
                format!(
                    "run went past {cap} steps ({LONG_RUN_FACTOR} times max_steps {}) without a cycle of yields: an endless loop, or a run longer than braid follows (raise max_steps)",
                    self.max_steps
                ),
            )
        })
    }
}
