//! `tokio::time::{pause, resume, advance}` on braid's virtual clock. braid's clock never
//! follows the wall clock: when every task waits it jumps to the next timer, and, unless paused,
//! it may also jump while a task can still run (a slow task; see `Check::clock_jumps`). So
//! `pause` makes it tokio's paused clock (only the first kind of jump), `resume` allows both
//! again, and `advance(d)` lets `d` of virtual time pass for the calling task: it sleeps `d`, during
//! which the other tasks run and the timers due fire (in tokio, `advance` moves the clock at
//! once and then yields; here the other tasks may also move while the clock has not reached
//! `d` yet, which are schedules tokio's multi-thread runtime can take too).

use std::time::Duration;

/// Pauses the clock, as tokio's: from now on time moves only when every task waits.
///
/// ```
/// use braid::tokio::time::{self, Duration, Instant};
///
/// braid::check(|| async {
///     time::pause();
///     let start = Instant::now();
///     time::advance(Duration::from_secs(5)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(5));
///     time::resume();
/// })
/// .assert_holds();
/// ```
pub fn pause() {
    sim::time::pause();
}

/// Resumes the clock: it may jump ahead of a slow task again (within the run's budget).
pub fn resume() {
    sim::time::resume();
}

/// Lets `duration` of virtual time pass (see the module doc).
pub async fn advance(duration: Duration) {
    sim::time::sleep(duration).await;
}
