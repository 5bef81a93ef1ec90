//! Tasks, shaped like `tokio::task`: spawn one, await its `JoinHandle`, yield to the others.

use std::future::Future;

pub use sim::task::{JoinError, JoinHandle};

/// Spawns a task, as `tokio::spawn` does, and returns the handle that awaits its output.
/// Tasks are named `task`, `task#2`, ... in traces and replay files, in spawn order;
/// [`spawn_named`] gives one a name of its own.
///
/// A panic in the task (a failed `assert!`) is the bug the test is looking for: it ends the
/// run as a violation, so a `JoinHandle` is never awaited for a task that panicked.
///
/// ```
/// braid::check(|| async {
///     let handle = braid::spawn(async { 6 * 7 });
///     assert_eq!(handle.await.unwrap(), 42);
/// })
/// .assert_holds();
/// ```
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    sim::task::spawn_joinable("task", future)
}

/// Spawns a task with a name for traces and replay files (`writer`, then `writer#2`, ...).
///
/// ```
/// braid::check(|| async {
///     let writer = braid::task::spawn_named("writer", async { "done" });
///     assert_eq!(writer.await.unwrap(), "done");
/// })
/// .assert_holds();
/// ```
pub fn spawn_named<F>(name: &str, future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    sim::task::spawn_joinable(name, future)
}

/// Lets the other tasks run, as `tokio::task::yield_now` does, and fairly: this task is not
/// picked again until every task that could run when it yielded has taken a step (or can no
/// longer run). A spin-wait that yields is therefore never starved into a false "stall", in
/// any strategy, DFS included; one that can never make progress is a `livelock`.
///
/// ```
/// braid::check(|| async {
///     braid::task::yield_now().await;
/// })
/// .assert_holds();
/// ```
pub async fn yield_now() {
    sim::yield_now().await;
}

/// Stands for an I/O await in a test double (a database call, a network round trip): a
/// scheduling point after which any task may run next, this one included. Unlike
/// [`yield_now`] it is not fair: a fake store that yields with `yield_now` would let every
/// other task move before each reply, and the schedules where the reply comes at once would
/// never be explored.
///
/// ```
/// braid::check(|| async {
///     braid::task::io_point("db: load session").await;
/// })
/// .assert_holds();
/// ```
pub async fn io_point(label: &'static str) {
    sim::yield_point(label).await;
}
