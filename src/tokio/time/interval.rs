//! `tokio::time::Interval`: ticks every period of virtual time, tokio's way. The first tick is
//! at its start; a tick found more than 5 ms late schedules the next by its
//! `MissedTickBehavior`; each tick waits on a `Sleep`, so it takes a unit of the task's
//! cooperative budget.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use sim::time::Instant;

use super::sleep::{sleep_until, Sleep, FAR};

/// Ticks every `period`, the first tick at once.
///
/// # Panics
///
/// When `period` is zero, as tokio's.
pub fn interval(period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "`period` must be non-zero.");
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`.
///
/// # Panics
///
/// When `period` is zero, as tokio's.
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "`period` must be non-zero.");
    Interval {
        delay: sleep_until(start),
        period: period.min(FAR),
        missed_tick_behavior: MissedTickBehavior::default(),
    }
}

/// What an interval does when a tick comes late (tokio's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// The missed ticks come at once, then the schedule goes on as planned.
    #[default]
    Burst,
    /// The next tick is a period after the late one.
    Delay,
    /// The missed ticks are skipped: the next is on the next multiple of the period.
    Skip,
}

impl MissedTickBehavior {
    /// The tick after one due at `timeout` and taken at `now`.
    fn next_timeout(self, timeout: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            Self::Burst => timeout + period,
            Self::Delay => now + period,
            Self::Skip => {
                let late = (now - timeout).as_nanos() % period.as_nanos();
                now + (period - Duration::from_nanos(late as u64))
            }
        }
    }
}

/// The ticks of [`interval`].
#[derive(Debug)]
pub struct Interval {
    /// Until the next tick.
    delay: Sleep,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

impl Interval {
    /// Waits for the next tick and returns when it was due.
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick: when it was due, once it is.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        ready!(Pin::new(&mut self.delay).poll(cx));
        let timeout = self.delay.deadline();
        let now = Instant::now();
        let next = if now > timeout + Duration::from_millis(5) {
            self.missed_tick_behavior
                .next_timeout(timeout, now, self.period)
        } else {
            timeout + self.period
        };
        Pin::new(&mut self.delay).reset(next);
        Poll::Ready(timeout)
    }

    /// The next tick a period from now.
    pub fn reset(&mut self) {
        self.reset_at(Instant::now() + self.period);
    }

    /// The next tick now.
    pub fn reset_immediately(&mut self) {
        self.reset_at(Instant::now());
    }

    /// The next tick `after` from now.
    pub fn reset_after(&mut self, after: Duration) {
        self.reset_at(Instant::now() + after.min(FAR));
    }

    /// The next tick at `deadline`.
    pub fn reset_at(&mut self, deadline: Instant) {
        Pin::new(&mut self.delay).reset(deadline);
    }

    /// What it does when a tick comes late.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets what it does when a tick comes late.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}
