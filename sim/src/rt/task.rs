//! Model tasks: spawned by name on madsim, parked on the baton between scheduling points, and
//! caught when they panic.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll, Waker};

use super::op::Op;
use super::with_exec;

/// A task within one run, numbered in spawn order (deterministic: spawns happen under the baton).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub usize);

pub(crate) struct Task {
    pub name: String,
    /// The operation the task is parked on; `None` while it holds the baton or once finished.
    pub pending: Option<Op>,
    pub finished: bool,
    /// Set when the strategy grants this task the baton; cleared when it resumes.
    pub granted: bool,
    pub waker: Option<Waker>,
    /// The value drawn for the task's last `choose`.
    pub choice: usize,
}

/// Spawns a model task named `name`. It first runs when the strategy grants it the baton.
pub fn spawn<F>(name: impl Into<String>, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    let id = with_exec(|ex| ex.add_task(name.into()));
    let body = Abortable(Box::pin(async move {
        WaitBaton(id).await;
        let outcome = CatchUnwind(Box::pin(future)).await;
        with_exec(|ex| match outcome {
            Ok(()) => ex.task_finished(id),
            Err(message) => ex.task_panicked(id, message),
        });
    }));
    drop(madsim::task::spawn_local(body));
    id
}

/// Parks the running task on `op` and lets the strategy pick who runs next. Returns the value
/// drawn when `op` is a `choose`.
pub(crate) async fn point(op: Op) -> usize {
    let me = with_exec(|ex| ex.park_current(op));
    WaitBaton(me).await;
    with_exec(|ex| ex.tasks[me.0].choice)
}

/// Completes, dropping the task's future, as soon as the run is over. A task parked forever (a
/// server idle at quiescence, a task in a deadlock) must not outlive its run: madsim keeps a
/// waker of every pending task in the task's own bookkeeping, so a future that never completes
/// is never freed, and every run would leak its parked tasks.
struct Abortable<F>(Pin<Box<F>>);

impl<F: Future<Output = ()>> Future for Abortable<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if with_exec(|ex| ex.is_over()) {
            return Poll::Ready(());
        }
        self.0.as_mut().poll(cx)
    }
}

/// Ready once the task holds the baton. Never ready again after the run has ended: the task is
/// then rescheduled once more and `Abortable` completes it.
struct WaitBaton(TaskId);

impl Future for WaitBaton {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let id = self.0;
        with_exec(|ex| {
            if ex.is_over() {
                // Have madsim poll the task once more, so that `Abortable` completes it.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let task = &mut ex.tasks[id.0];
            if task.granted {
                task.granted = false;
                Poll::Ready(())
            } else {
                task.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

thread_local! {
    static IN_MODEL: RefCell<bool> = const { RefCell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that keeps model panics quiet — they are reported
/// as violations — and leaves every other panic to the previous hook.
pub(crate) fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_MODEL.with(|m| *m.borrow()) {
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".to_string());
                let located = match info.location() {
                    Some(loc) => format!("{message} (at {}:{})", loc.file(), loc.line()),
                    None => message,
                };
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(located));
            } else {
                previous(info);
            }
        }));
    });
}

struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future<Output = ()>> Future for CatchUnwind<F> {
    type Output = Result<(), String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        IN_MODEL.with(|m| *m.borrow_mut() = true);
        let result = panic::catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx)));
        IN_MODEL.with(|m| *m.borrow_mut() = false);
        match result {
            Ok(Poll::Ready(())) => Poll::Ready(Ok(())),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => {
                let message = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_else(|| "panic".to_string());
                Poll::Ready(Err(message))
            }
        }
    }
}
