//! Tasks with a result: spawned like `sim::spawn`, awaited through a `JoinHandle`, and the one
//! main task whose end ends the run (a test body's).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use crate::rt::op::Op;
use crate::rt::point::{point, Point};
use crate::rt::with_exec;
use crate::vocab::{ObjId, TaskId};

pub use crate::rt::model_task::take_last_panic;
pub use crate::rt::point::Cancelled;

/// Marks task `id` cancelled: a stackful task unwinds (`Cancelled`) when it goes on from the
/// next await that parks it (a yield, an I/O point), where tokio would return `Pending` and
/// drop an aborted task; the other kinds of task are cancelled by whoever polls them.
pub fn cancel(id: TaskId) {
    with_exec(|ex| {
        if let Some(task) = ex.tasks.get_mut(id.0) {
            task.cancelled = true;
        }
    });
}

/// A task's panic was caught to be handed to its joiner (`message` says which task and why):
/// until `panic_observed` says the joiner took it, a run that ends fails with it (see
/// `Execution::finish`). Returns its number.
pub fn panic_caught(message: String) -> u64 {
    with_exec(|ex| ex.panic_caught(message))
}

/// The joiner took the caught panic number `id`.
pub fn panic_observed(id: u64) {
    crate::rt::try_with_exec(|ex| {
        ex.panic_observed(id);
    });
}

/// Whether a panic payload caught in a task is the engine unwinding an abandoned task (its run
/// is over, or its node crashed): it must be resumed (`std::panic::resume_unwind`), never kept.
pub fn is_engine_unwind(payload: &(dyn std::any::Any + Send)) -> bool {
    crate::rt::coroutine::is_abandon(payload)
}

/// Spawns a task named `name` whose output its `JoinHandle` yields. A panic in the task ends
/// the run as a `panic` violation (that is the bug a test is looking for), so awaiting the
/// handle of a task that panicked is never reached.
pub fn spawn_joinable<F>(name: impl AsRef<str>, future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    let slot = Arc::new(Mutex::new(None));
    let out = slot.clone();
    let task = crate::spawn(name, async move {
        let value = future.await;
        *lock(&out) = Some(value);
    });
    let done = with_exec(|ex| ex.make_joinable(task));
    JoinHandle {
        task,
        done,
        slot,
        waiting: None,
    }
}

/// Spawns the run's main task: once it has finished the run is over, and the tasks left, able
/// to run or not, are dropped without another step, as tokio's runtime drops its tasks when a
/// `#[tokio::test]` body returns (they are neither a deadlock nor a livelock).
pub fn spawn_main<F>(name: impl AsRef<str>, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    let task = crate::spawn(name, future);
    with_exec(|ex| ex.set_main(task));
    task
}

/// The output slot, locked (never contended: one thread runs a simulation, and the lock is
/// held for one statement).
fn lock<T>(slot: &Mutex<Option<T>>) -> MutexGuard<'_, Option<T>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Awaits a task's end and yields its output. Awaiting it is a scheduling point, enabled once
/// the task has finished. `Send` and `Sync` when the output is `Send`, as tokio's: the slot is
/// in a `std::sync::Mutex`, and the rest are ids into the run.
pub struct JoinHandle<T> {
    task: TaskId,
    done: ObjId,
    slot: Arc<Mutex<Option<T>>>,
    waiting: Option<Point>,
}

impl<T> JoinHandle<T> {
    /// The task this handle joins.
    pub fn id(&self) -> TaskId {
        self.task
    }

    /// Whether the task has finished (not a scheduling point: it reads nothing another task
    /// could be changing at this instant, only the handle's own slot).
    pub fn is_finished(&self) -> bool {
        lock(&self.slot).is_some()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let done = self.done;
        let point = self.waiting.get_or_insert_with(|| point(Op::Join(done)));
        match Pin::new(point).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(_) => {
                self.waiting = None;
                with_exec(|ex| {
                    ex.access(done, crate::vocab::AccessKind::Read);
                    ex.observe_value(done);
                });
                let value = lock(&self.slot).take();
                match value {
                    Some(value) => Poll::Ready(Ok(value)),
                    None => Poll::Ready(Err(JoinError { task: self.task })),
                }
            }
        }
    }
}

/// A task that ended without an output: joined a second time (its output was taken).
#[derive(Debug)]
pub struct JoinError {
    task: TaskId,
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task {} has no output to join", self.task.0)
    }
}

impl std::error::Error for JoinError {}
