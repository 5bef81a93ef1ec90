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
    /// Set by the waker the task's future sees (`TaskWake`); read at each decision while the
    /// task is blocked on it (`Op::Blocked`).
    pub wake_flag: Option<Arc<TaskWake>>,
    /// Its wake-up object, once it has blocked on a waker.
    pub wake_obj: Option<super::ObjId>,
    /// Blocked on a waker: its next grant resumes its future from `ModelTask` (no scheduling
    /// point inside it is waiting for the baton).
    pub blocked: bool,
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
        waker: None,
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
    /// The waker the model's future sees: it marks the task woken (see `TaskWake`), leaving
    /// madsim's waker to the baton.
    waker: Option<Waker>,
}

/// What a model task's waker does: note that the task may go on. It touches nothing else (a
/// waker may be called from anywhere, even while the execution is borrowed): the executor reads
/// the flag when it next decides.
#[derive(Default)]
pub(crate) struct TaskWake {
    woken: std::sync::atomic::AtomicBool,
}

impl TaskWake {
    /// Whether it was woken since it was last cleared, clearing it.
    pub(crate) fn take(&self) -> bool {
        self.woken.swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn is_set(&self) -> bool {
        self.woken.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl std::task::Wake for TaskWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, std::sync::atomic::Ordering::Relaxed);
    }
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
        let id = this.id;
        let go = with_exec(|ex| {
            if ex.is_over() {
                return None;
            }
            // madsim's waker hands the task the baton (see `Execution::decide`).
            let task = &mut ex.tasks[id.0];
            if !task.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                task.waker = Some(cx.waker().clone());
            }
            // Not yet started, or blocked on a waker: it goes on only with the baton. (A task
            // parked at a scheduling point goes on, and its `Point` checks the baton.)
            if this.started && !task.blocked {
                return Some(true);
            }
            let granted = task.take_grant();
            if granted {
                task.blocked = false;
            }
            Some(granted)
        });
        match go {
            None => return Poll::Ready(()),
            Some(false) => return Poll::Pending,
            Some(true) => {}
        }
        if !this.started {
            this.started = true;
        }
        let waker = this.waker.get_or_insert_with(|| {
            let flag = Arc::new(TaskWake::default());
            with_exec(|ex| ex.tasks[id.0].wake_flag = Some(flag.clone()));
            Waker::from(flag)
        });
        let mut inner = Context::from_waker(waker);
        // SAFETY: see above.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        IN_MODEL.with(|m| m.set(true));
        let result = panic::catch_unwind(AssertUnwindSafe(|| future.poll(&mut inner)));
        IN_MODEL.with(|m| m.set(false));
        match result {
            Ok(Poll::Pending) => {
                // Pending without parking at a scheduling point: blocked on a waker. Once the
                // run is over, the task completes (dropping its future).
                let over = with_exec(|ex| {
                    if !ex.is_over() && ex.current == Some(id) && ex.tasks[id.0].pending.is_none() {
                        ex.block_current();
                    }
                    ex.is_over()
                });
                match over {
                    true => Poll::Ready(()),
                    false => Poll::Pending,
                }
            }
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
/// baton.
fn wait_baton_in(ex: &mut Execution, id: TaskId, _cx: &mut Context<'_>) -> Poll<usize> {
    // Once the run is over the task stays pending here: `ModelTask` sees the end and completes
    // it (madsim's waker, which `finish` wakes, is the one `ModelTask` keeps).
    if ex.is_over() {
        return Poll::Pending;
    }
    let task = &mut ex.tasks[id.0];
    if task.granted {
        task.granted = false;
        Poll::Ready(task.choice)
    } else {
        Poll::Pending
    }
}

impl Task {
    /// Takes the baton if the strategy granted it.
    fn take_grant(&mut self) -> bool {
        std::mem::take(&mut self.granted)
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
