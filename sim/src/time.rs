//! Virtual time: `sleep`, `timeout`, `interval` and `Instant`, which never wait on the wall
//! clock. Time moves only when no task can: it jumps to the next deadline, and the timers due
//! then fire together, so which of their tasks goes first is the strategy's decision, recorded
//! and replayed like any other. A run that only waits on timers is therefore not a deadlock.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::with_exec;

/// A point in a run's virtual time (zero when the run begins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

impl Instant {
    /// The run's current virtual time.
    pub fn now() -> Instant {
        Instant(with_exec(|ex| ex.read_time()))
    }

    /// Virtual time passed since `self`.
    pub fn elapsed(&self) -> Duration {
        Instant::now().0.saturating_sub(self.0)
    }

    /// The time from `earlier` to `self` (zero if `earlier` is later).
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// `self + d`, if it fits.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.0.checked_add(d).map(Instant)
    }

    /// `self - d`, if it is not before the run began.
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(d).map(Instant)
    }

    /// The time from `earlier` to `self`, zero if `earlier` is later (as `duration_since`).
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

/// `self - d`, or the run's beginning if that is earlier: virtual time starts at zero, so an
/// instant "a second before now" in a run's first second is its first instant.
impl std::ops::Sub<Duration> for Instant {
    type Output = Instant;

    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d))
    }
}

impl std::ops::Add<Duration> for Instant {
    type Output = Instant;

    fn add(self, d: Duration) -> Instant {
        Instant(self.0 + d)
    }
}

impl std::ops::Sub<Instant> for Instant {
    type Output = Duration;

    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

/// Waits until `duration` of virtual time has passed, counted from its first poll.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        deadline: Deadline::After(duration),
        timer: None,
        fired: false,
    }
}

/// Waits until virtual time reaches `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline: Deadline::At(deadline.0),
        timer: None,
        fired: false,
    }
}

#[derive(Clone, Copy, Debug)]
enum Deadline {
    /// Relative to the first poll. tokio's `sleep` counts from its making, and so does the
    /// tokio facade's (`braid::tokio::time`, which fixes the deadline when it makes its sleep);
    /// the two differ when a task makes a sleep and waits on something else before polling it.
    After(Duration),
    At(Duration),
}

/// The future of [`sleep`]: pending until its deadline, its timer cancelled when dropped.
pub struct Sleep {
    deadline: Deadline,
    timer: Option<(Duration, u64)>,
    /// A poll found it elapsed.
    fired: bool,
}

impl Sleep {
    /// When it fires (once polled).
    pub fn deadline(&self) -> Option<Instant> {
        match self.deadline {
            Deadline::At(d) => Some(Instant(d)),
            Deadline::After(_) => None,
        }
    }

    /// Whether it has elapsed: its timer fired, or a poll found the deadline passed (as
    /// tokio's, not merely the clock being past the deadline before the first poll).
    pub fn is_elapsed(&self) -> bool {
        if self.fired {
            return true;
        }
        match self.timer {
            Some(key) => with_exec(|ex| !ex.timer_pending(key)),
            None => false,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = with_exec(|ex| ex.read_time());
        let deadline = match self.deadline {
            Deadline::At(d) => d,
            Deadline::After(d) => now.saturating_add(d),
        };
        self.deadline = Deadline::At(deadline);
        if now >= deadline {
            if let Some(key) = self.timer.take() {
                with_exec(|ex| ex.cancel_timer(key));
            }
            self.fired = true;
            return Poll::Ready(());
        }
        match self.timer {
            Some(key) => with_exec(|ex| ex.update_timer(key, cx.waker())),
            None => {
                let (key, clock) =
                    with_exec(|ex| (ex.add_timer(deadline, cx.waker().clone()), ex.wants_clock()));
                self.timer = Some(key);
                if clock {
                    start_clock();
                }
            }
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.timer.take() {
            crate::rt::try_with_exec(|ex| ex.cancel_timer(key));
        }
    }
}

/// Pauses the run's clock, as `tokio::time::pause`: from now on time moves only when every
/// task waits (no clock jump ahead of a task that can run; see `Model::clock_jumps`).
pub fn pause() {
    with_exec(|ex| ex.pause_clock(true));
}

/// Undoes [`pause`]: the clock may jump again, within the run's budget.
pub fn resume() {
    with_exec(|ex| ex.pause_clock(false));
}

/// Starts the run's clock task, at its first timer when the run may jump its clock
/// (`Model::clock_jumps`): each of its steps is a jump of virtual time to the next deadline
/// while other tasks could still run. Like a node's crash task, it has no start step: it waits
/// for its jump from the start, and each grant is one.
fn start_clock() {
    let obj = with_exec(|ex| ex.add_object("clock".into(), ObjState::Node));
    let clock = crate::spawn("clock", async move {
        loop {
            with_exec(|ex| ex.jump_clock());
            point(Op::ClockJump(obj)).await;
        }
    });
    with_exec(|ex| {
        ex.first_waits_on(clock, Op::ClockJump(obj));
        ex.clock_mut().set_task(clock);
    });
}

/// The deadline of [`timeout`] passed before the future finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed;

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

/// Runs `future` with a deadline `duration` from now: `Err(Elapsed)` if the deadline comes
/// first (the future is dropped, as tokio's `timeout` drops it).
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep(duration),
    }
}

/// The future of [`timeout`].
pub struct Timeout<F> {
    future: F,
    sleep: Sleep,
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: structural pinning of `future`; `sleep` is Unpin and never moved out.
        let this = unsafe { self.get_unchecked_mut() };
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        if let Poll::Ready(v) = future.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match Pin::new(&mut this.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Ticks every `period` of virtual time; the first tick is immediate (as tokio's).
pub fn interval(period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "an interval's period must be more than zero"
    );
    Interval { period, next: None }
}

/// The ticks of [`interval`].
pub struct Interval {
    period: Duration,
    next: Option<Instant>,
}

impl Interval {
    /// Waits for the next tick and returns its instant.
    pub async fn tick(&mut self) -> Instant {
        let at = *self.next.get_or_insert_with(Instant::now);
        sleep_until(at).await;
        self.next = Some(at + self.period);
        at
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}
