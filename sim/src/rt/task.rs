//! Model tasks: spawned by name on madsim, parked on the baton between scheduling points, and
//! caught when they panic.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Once};
use std::task::{Context, Poll, Waker};

use super::execution::Execution;
use super::op::Op;
use super::with_exec;

/// A task within one run, numbered in spawn order (deterministic: spawns happen under the baton).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub usize);

pub(crate) struct Task {
    pub name: Arc<str>,
    /// A hash of the name without its namesake suffix (`handler#2` -> `handler`), for end
    /// states (see `Execution::end_state`).
    pub base_hash: u64,
    /// The operation the task is parked on; `None` while it holds the baton or once finished.
    pub pending: Option<Op>,
    pub finished: bool,
    /// Set when the strategy grants this task the baton; cleared when it resumes.
    pub granted: bool,
    /// The madsim task's waker, from its first park on (woken by reference: it never changes).
    pub waker: Option<Waker>,
    /// The value drawn for the task's last `choose`.
    pub choice: usize,
    /// The object its end writes, when someone may join it.
    pub done: Option<super::ObjId>,
    /// The step at which the strategy last granted it the baton.
    pub last_granted: Option<usize>,
    /// While it waits in a fair yield: the step from which the others' steps count, and the
    /// tasks that were enabled then (see `Execution::fair`).
    pub fair_wait: Option<FairWait>,
}

/// What a task in a fair yield waits for: each task in `others` to take a step at or after
/// step `since`, or to stop being enabled.
#[derive(Clone, Debug)]
pub(crate) struct FairWait {
    pub since: usize,
    pub others: Vec<u32>,
}

impl FairWait {
    /// The tasks it still waits for to move (before any is checked for being enabled).
    pub(crate) fn unmoved<'t>(&'t self, tasks: &'t [Task]) -> impl Iterator<Item = u32> + 't {
        self.others.iter().copied().filter(move |&w| {
            tasks[w as usize]
                .last_granted
                .is_none_or(|g| g < self.since)
        })
    }
}

/// Spawns a model task named `name`. It first runs when the strategy grants it the baton.
pub fn spawn<F>(name: impl Into<String>, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    let id = with_exec(|ex| ex.add_task(name.into()));
    LIVE_TASKS.with(|n| n.set(n.get() + 1));
    drop(madsim::task::spawn_local(ModelTask {
        id,
        started: false,
        future,
    }));
    id
}

/// Model tasks whose future madsim has not dropped yet. Zero once a run is over and its
/// `block_on` has returned; otherwise the runtime is not reused (a stale task must never be
/// polled in a later run).
pub(crate) fn live_tasks() -> usize {
    LIVE_TASKS.with(Cell::get)
}

/// Parks the running task on `op` and lets the strategy pick who runs next. Ready with the
/// value drawn (when `op` is a `choose`) once the task holds the baton again.
pub(crate) fn point(op: Op) -> Point {
    Point::Parking(op)
}

/// A scheduling point: first the task parks and the strategy decides, then (unless picked
/// again at once) it waits for the baton. Both in one borrow of the execution per poll.
pub(crate) enum Point {
    Parking(Op),
    Waiting(TaskId),
}

impl Future for Point {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        match *self {
            Point::Parking(op) => {
                let (me, ready) = with_exec(|ex| {
                    let me = ex.park_current(op);
                    // Picked again at once, this goes on without a round trip through madsim.
                    (me, wait_baton_in(ex, me, cx))
                });
                *self = Point::Waiting(me);
                ready
            }
            Point::Waiting(me) => with_exec(|ex| wait_baton_in(ex, me, cx)),
        }
    }
}

/// A model task as madsim runs it: it waits for the baton before its first poll, turns a panic
/// into a violation, and tells the execution when it is done.
///
/// It completes, dropping the model's future, as soon as the run is over. A task parked
/// forever (a server idle at quiescence, a task in a deadlock) must not outlive its run: madsim
/// keeps a waker of every pending task in the task's own bookkeeping, so a future that never
/// completes is never freed, and every run would leak its parked tasks.
///
/// One hand-written future holds the model's future inline (madsim already puts the whole task
/// on the heap): spawning allocates no box of its own, and an `async` wrapper would have kept
/// the future twice over in its state.
struct ModelTask<F> {
    id: TaskId,
    started: bool,
    future: F,
}

impl<F> Drop for ModelTask<F> {
    fn drop(&mut self) {
        LIVE_TASKS.with(|n| n.set(n.get() - 1));
    }
}

impl<F: Future<Output = ()>> Future for ModelTask<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: structural pinning: `future` is never moved out of the task, and the other
        // fields are plain data.
        let this = unsafe { self.get_unchecked_mut() };
        if with_exec(|ex| ex.is_over()) {
            return Poll::Ready(());
        }
        if !this.started {
            if wait_baton(this.id, cx).is_pending() {
                return Poll::Pending;
            }
            this.started = true;
        }
        // SAFETY: see above.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        IN_MODEL.with(|m| m.set(true));
        let result = panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx)));
        IN_MODEL.with(|m| m.set(false));
        let id = this.id;
        match result {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) => {
                with_exec(|ex| ex.task_finished(id));
                Poll::Ready(())
            }
            Err(_) => {
                let message = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_else(|| "panic".to_string());
                with_exec(|ex| ex.task_panicked(id, message));
                Poll::Ready(())
            }
        }
    }
}

/// Ready, with the value drawn if the task parked on a `choose`, once the task holds the
/// baton. Never ready again after the run has ended: the task is then rescheduled once more and
/// `ModelTask` completes it.
fn wait_baton(id: TaskId, cx: &mut Context<'_>) -> Poll<usize> {
    with_exec(|ex| wait_baton_in(ex, id, cx))
}

fn wait_baton_in(ex: &mut Execution, id: TaskId, cx: &mut Context<'_>) -> Poll<usize> {
    if ex.is_over() {
        // Have madsim poll the task once more, so that `ModelTask` completes it.
        cx.waker().wake_by_ref();
        return Poll::Pending;
    }
    let task = &mut ex.tasks[id.0];
    if task.granted {
        task.granted = false;
        Poll::Ready(task.choice)
    } else {
        // A task keeps its waker from one park to the next: it is the same madsim task.
        if !task.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            task.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

thread_local! {
    static LIVE_TASKS: Cell<usize> = const { Cell::new(0) };
    static IN_MODEL: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that keeps model panics quiet — they are reported
/// as violations — and leaves every other panic to the previous hook.
pub(crate) fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_MODEL.with(Cell::get) {
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
