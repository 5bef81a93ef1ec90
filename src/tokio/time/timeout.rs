//! `tokio::time::Timeout`: a future with a deadline. As tokio's, when the future itself spent
//! the task's last unit of cooperative budget, the deadline is still looked at (without a
//! budget), so that a future that always spends the budget still times out.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use sim::time::{Elapsed, Instant};

use super::sleep::{checked_sleep, sleep_until, Sleep};
use crate::tokio::coop;

/// Runs `future` with a deadline `duration` from now: `Err(Elapsed)` if the deadline comes
/// first (the future is dropped with the `Timeout`). A duration past the clock's range never
/// times out.
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        value: future.into_future(),
        delay: checked_sleep(duration),
    }
}

/// Runs `future` with a deadline at `deadline`, as `tokio::time::timeout_at`.
///
/// ```
/// use braid::tokio::time::{self, Duration, Instant};
///
/// braid::check(|| async {
///     let deadline = Instant::now() + Duration::from_millis(10);
///     let slow = time::sleep(Duration::from_millis(20));
///     assert!(time::timeout_at(deadline, slow).await.is_err());
///     assert_eq!(Instant::now(), deadline);
/// })
/// // On tokio's paused clock: a jump could take the clock past the deadline before main runs.
/// .clock_jumps(0)
/// .assert_holds();
/// ```
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        value: future.into_future(),
        delay: Some(sleep_until(deadline)),
    }
}

/// The future of [`timeout`] and [`timeout_at`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct Timeout<T> {
    value: T,
    /// `None`: a deadline past the clock's range, never reached.
    delay: Option<Sleep>,
}

impl<T> Timeout<T> {
    /// The future inside.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The future inside, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// The future inside, its deadline dropped.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: Future> Future for Timeout<T> {
    type Output = Result<T::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: structural pinning of `value`; `delay` is Unpin and never moved out.
        let this = unsafe { self.get_unchecked_mut() };
        let value = unsafe { Pin::new_unchecked(&mut this.value) };
        let had_budget_before = coop::has_budget_remaining();
        if let Poll::Ready(v) = value.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        let has_budget_now = coop::has_budget_remaining();
        let Some(delay) = &mut this.delay else {
            return Poll::Pending;
        };
        let mut poll_delay = || Pin::new(&mut *delay).poll(cx).map(|()| Err(Elapsed));
        match (had_budget_before, has_budget_now) {
            // The future spent the last unit: the deadline is looked at all the same.
            (true, false) => coop::with_unconstrained(poll_delay),
            _ => poll_delay(),
        }
    }
}
