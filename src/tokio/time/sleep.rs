//! `tokio::time::Sleep`: braid's virtual-clock sleep (`sim::time::Sleep`) with tokio's face. Its
//! deadline is fixed when it is made, as tokio's (`sim::time::sleep` counts from its first
//! poll); each poll takes a unit of the task's cooperative budget, and `reset` moves it.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use sim::time::Instant;

use crate::tokio::coop;

/// Longer than any run: tokio's cap on a delay (roughly 30 years).
pub(super) const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);

/// Waits until `duration` of virtual time has passed from now.
pub fn sleep(duration: Duration) -> Sleep {
    checked_sleep(duration).unwrap_or_else(|| sleep_until(Instant::now() + FAR))
}

/// [`sleep`], or `None` when its deadline is past the clock's range (tokio's `sleep` then
/// waits 30 years; its `timeout` never times out).
pub(super) fn checked_sleep(duration: Duration) -> Option<Sleep> {
    // Outside a run there is no clock yet: the deadline then counts from the first poll.
    match sim::engine_running() {
        true => Instant::now().checked_add(duration).map(sleep_until),
        false => Some(Sleep {
            inner: sim::time::sleep(duration),
            after: duration,
        }),
    }
}

/// Waits until virtual time reaches `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        inner: sim::time::sleep_until(deadline),
        after: Duration::ZERO,
    }
}

/// The future of [`sleep`], as tokio's: pending until its deadline, its timer cancelled when
/// dropped.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep {
    inner: sim::time::Sleep,
    /// For a sleep made outside a run: its duration, counted from its first poll.
    after: Duration,
}

impl Sleep {
    /// When it ends.
    pub fn deadline(&self) -> Instant {
        self.inner
            .deadline()
            .unwrap_or_else(|| Instant::now() + self.after)
    }

    /// Whether it has ended: a poll found its deadline passed, or its timer fired.
    pub fn is_elapsed(&self) -> bool {
        self.inner.is_elapsed()
    }

    /// Moves its deadline to `deadline`, elapsed or not: it waits again (tokio's `reset`).
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        // The old timer is cancelled as its sleep is dropped; the new one is set at the next
        // poll, as the task that owns the sleep polls it before it waits on it.
        self.get_mut().inner = sim::time::sleep_until(deadline);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let coop = ready!(coop::poll_proceed(cx));
        coop.settle(Pin::new(&mut self.inner).poll(cx))
    }
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.inner.deadline())
            .field("elapsed", &self.is_elapsed())
            .finish()
    }
}
