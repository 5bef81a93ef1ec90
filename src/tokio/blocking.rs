//! `tokio::task::spawn_blocking`: under braid the closure runs as an ordinary task. Tasks run
//! stackful, so a closure that blocks on a braid primitive (`blocking_recv`, a
//! `braid::std::sync` lock) parks its task like any other; there is no thread pool.

use super::join::{spawn, JoinHandle};

/// Runs `f` as a task and returns its handle, as `tokio::task::spawn_blocking` (no thread
/// pool: the closure is one more task of the run, interleaved like the others).
///
/// ```
/// use braid::tokio::task;
///
/// braid::check(|| async {
///     let sum = task::spawn_blocking(|| (1..=4).sum::<u32>());
///     assert_eq!(sum.await.unwrap(), 10);
/// })
/// .assert_holds();
/// ```
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    spawn(async move { f() })
}
