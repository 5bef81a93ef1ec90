//! `tokio::time::{pause, resume, advance}` on braid's virtual clock. braid's clock is always
//! what tokio calls paused with auto-advance: it never follows the wall clock, and when every
//! task waits it jumps to the next timer. So `pause` and `resume` change nothing, and
//! `advance(d)` lets `d` of virtual time pass for the calling task: it sleeps `d`, during
//! which the other tasks run and the timers due fire (in tokio, `advance` moves the clock at
//! once and then yields; here the other tasks may also move while the clock has not reached
//! `d` yet, which are schedules tokio's multi-thread runtime can take too).

use std::time::Duration;

/// Pauses the clock: braid's is always paused (virtual, auto-advancing), so a no-op.
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
pub fn pause() {}

/// Resumes the clock: braid's never follows the wall clock, so a no-op.
pub fn resume() {}

/// Lets `duration` of virtual time pass (see the module doc).
pub async fn advance(duration: Duration) {
    sim::time::sleep(duration).await;
}
