//! What drives model tasks: each, spawned by name, runs one slice at a time (a poll, or a
//! resume of its own stack) while it holds the baton, parks on the request its slice made, and
//! tells the execution when it finishes or panics; its body is dropped when it ends, when its
//! node crashes, or when the run is over.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll, Waker};

use super::coroutine::{Slice, Stackful};
use super::execution::Execution;
use super::op::Op;
use super::point::park;
use super::task::TaskState;
use super::with_exec;
use crate::vocab::TaskId;

/// Spawns a model task named `name`. It first runs when the strategy grants it the baton.
/// In a run of a model that asks for stackful tasks (`Model::stackful_tasks`) it runs on a
/// stack of its own, so that a synchronous operation can park it.
pub fn spawn<F>(name: impl AsRef<str>, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    spawn_as(name.as_ref(), None, future)
}

/// Spawns one of the model's interchangeable tasks, the member `id` of
/// `Model::symmetric_members`: as `spawn`, from the model's setup, once per member.
pub fn spawn_member<F>(name: impl AsRef<str>, id: usize, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    spawn_as(name.as_ref(), Some(id), future)
}

fn spawn_as<F>(name: &str, member: Option<usize>, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    let (id, stackful, flag, run) = with_exec(|ex| {
        let id = ex.add_task(name, member);
        let flag = super::execution::spare::wake_flag();
        ex.tasks[id.0].wake_flag = Some(flag.clone());
        (id, ex.stackful(), flag, super::run_id())
    });
    let waker = Waker::from(flag);
    let body = match stackful {
        true => TaskBody::Stackful(Stackful::new(future, waker)),
        false => TaskBody::Stackless(Box::pin(Stackless { future, waker })),
    };
    bodies::put(run, id, body);
    LIVE_TASKS.with(|n| n.set(n.get() + 1));
    id
}

/// Model tasks whose body has not been dropped yet. Zero once a run is over and its
/// `block_on` has returned; otherwise the runtime is not reused (a stale task must never be
/// polled in a later run).
pub(crate) fn live_tasks() -> usize {
    LIVE_TASKS.with(Cell::get)
}

/// A stackless model future, polled one slice at a time in place.
trait Body {
    fn slice(self: Pin<&mut Self>) -> Ran;
}

/// The model's future, run one slice at a time: on a stack of its own (which moves freely),
/// or polled in place (pinned in a box).
enum TaskBody {
    Stackful(Stackful),
    Stackless(Pin<Box<dyn Body>>),
}

impl TaskBody {
    fn slice(&mut self) -> Ran {
        match self {
            TaskBody::Stackful(stackful) => match stackful.resume() {
                Slice::Suspended => Ran::Pending,
                Slice::Finished => Ran::Finished,
                Slice::Panicked => Ran::Panicked(take_panic_message()),
                Slice::Abandoned => Ran::Abandoned,
            },
            TaskBody::Stackless(body) => body.as_mut().slice(),
        }
    }
}

/// Each task's body while it is not running, by task number, for the run in progress on this
/// thread: a slice takes its task's body out, so that it may spawn tasks (which add theirs).
mod bodies {
    use std::cell::RefCell;

    use super::TaskBody;
    use crate::vocab::TaskId;

    thread_local! {
        /// The run the bodies belong to (`rt::run_id`), and the bodies.
        static TABLE: RefCell<(u64, Vec<Option<TaskBody>>)> = const { RefCell::new((0, Vec::new())) };
    }

    pub(super) fn put(run: u64, id: TaskId, body: TaskBody) {
        TABLE.with(|t| {
            let mut t = t.borrow_mut();
            if t.0 != run {
                // A new run. A body left by an earlier one (a run the engine's own panic
                // cut short) stays leaked, never run or dropped in another run.
                for body in t.1.drain(..).flatten() {
                    std::mem::forget(body);
                }
                t.0 = run;
            }
            if t.1.len() <= id.0 {
                t.1.resize_with(id.0 + 1, || None);
            }
            t.1[id.0] = Some(body);
        });
    }

    /// Task `id`'s body, taken out (`None` while it runs, or once it has ended).
    pub(super) fn take(run: u64, id: TaskId) -> Option<TaskBody> {
        TABLE.with(|t| {
            let mut t = t.borrow_mut();
            match t.0 == run {
                true => t.1.get_mut(id.0)?.take(),
                false => None,
            }
        })
    }
}

/// A future polled in place.
struct Stackless<F> {
    future: F,
    /// The waker the model's future sees: it marks the task woken (see `TaskWake`).
    waker: Waker,
}

/// How one slice of a task (a poll, or a resume up to its next suspension) ended.
enum Ran {
    Pending,
    Finished,
    Panicked(String),
    Abandoned,
}

impl<F: Future<Output = ()>> Body for Stackless<F> {
    fn slice(self: Pin<&mut Self>) -> Ran {
        // SAFETY: structural pinning: `future` is never moved out, `waker` is plain data.
        let this = unsafe { self.get_unchecked_mut() };
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        let mut cx = Context::from_waker(&this.waker);
        match panic::catch_unwind(AssertUnwindSafe(|| future.poll(&mut cx))) {
            Ok(Poll::Pending) => Ran::Pending,
            Ok(Poll::Ready(())) => Ran::Finished,
            Err(_) => Ran::Panicked(take_panic_message()),
        }
    }
}

/// The message (with its location) of the last panic in a model task on this thread, taken:
/// for a facade that catches a task's panic to hand it to the task's joiner.
pub fn take_last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

#[cold]
fn take_panic_message() -> String {
    LAST_PANIC
        .with(|p| p.borrow_mut().take())
        .unwrap_or_else(|| "panic".to_string())
}

/// Runs the model's tasks until the run is over: the baton holder's slice (a poll, or a resume
/// of its own stack), then the next holder's, each resumed here at once. madsim's executor
/// runs none of them: only the baton holder may go on, so its queue had nothing to decide, and
/// a round trip through it (a spawn, a first poll, a wake and a poll per hand-over) was a
/// fifth of a short run's time. The run still happens inside madsim's runtime (its clock and
/// its randomness are what a task reads from std).
pub(crate) fn drive(run: u64) {
    let mut next = with_exec(Execution::take_handoff);
    while let Some(runner) = next {
        next = run_holder(run, runner);
    }
    assert!(
        with_exec(|ex| ex.is_over()),
        "braid engine: no task holds the baton and the run is not over"
    );
}

/// Runs `runner`, just granted the baton, slice after slice while it keeps it; then the task
/// granted the baton next, if the run goes on.
fn run_holder(run: u64, runner: TaskId) -> Option<TaskId> {
    if !with_exec(|ex| !ex.is_over() && ex.tasks[runner.0].take_grant()) {
        return None;
    }
    loop {
        let mut body = bodies::take(run, runner)?;
        IN_MODEL.with(|m| m.set(true));
        let ran = body.slice();
        IN_MODEL.with(|m| m.set(false));
        let ended = match ran {
            Ran::Pending => {
                bodies::put(run, runner, body);
                None
            }
            _ => Some(body),
        };
        let next = with_exec(|ex| after_slice(ex, runner, ran));
        // A body that ended is dropped once the execution has heard, outside its borrow (a
        // drop may reach it).
        if let Some(body) = ended {
            drop_body(runner, body);
        }
        drop_victims(run);
        match next {
            Next::Again => continue,
            Next::Wait | Next::Done => return with_exec(Execution::take_handoff),
        }
    }
}

/// Drops the bodies of the tasks a crash killed, in task order, within the crash's step.
fn drop_victims(run: u64) {
    // Most slices crash nothing: an empty list, cloned without allocating. A victim already
    // dropped has no body left to take.
    for id in with_exec(|ex| ex.victims()) {
        if let Some(body) = bodies::take(run, id) {
            drop_body(id, body);
        }
    }
}

/// Drops the bodies of the tasks left when the run is over (parked, or blocked for good), in
/// task order: a stackful one is finished on its own stack (see `rt::coroutine`). After this
/// no task of the run is alive.
pub(crate) fn drop_left(run: u64) {
    // The count is read again each time: a drop may spawn (its body is dropped in turn).
    let mut id = 0;
    while id < with_exec(|ex| ex.tasks.len()) {
        if let Some(mut body) = bodies::take(run, TaskId(id)) {
            if let TaskBody::Stackful(stackful) = &mut body {
                // Its slice's end is no news to the run, which is over: a panic there (say,
                // in a destructor) is kept from the user's hook, as in any slice.
                IN_MODEL.with(|m| m.set(true));
                if let Slice::Panicked = stackful.finish() {
                    LAST_PANIC.with(|p| p.borrow_mut().take());
                }
                IN_MODEL.with(|m| m.set(false));
            }
            drop_body(TaskId(id), body);
        }
        id += 1;
    }
}

/// Drops a task's body (its future, and its stack's contents) and notes it gone.
fn drop_body(id: TaskId, body: TaskBody) {
    drop(body);
    LIVE_TASKS.with(|n| n.set(n.get() - 1));
    super::try_with_exec(|ex| ex.tasks[id.0].dropped = true);
}

/// What a task does after a slice of it ran.
enum Next {
    /// Picked again at once: it goes on in a new slice.
    Again,
    /// Parked or blocked: it waits for the baton.
    Wait,
    /// It ended, or its run did.
    Done,
}

fn after_slice(ex: &mut Execution, id: TaskId, ran: Ran) -> Next {
    // Every slice ends here, so the next one (of any task) starts with no request.
    let request = ex.take_request();
    let parked_already = ex.take_parked_in_slice();
    if ex.is_over() {
        return Next::Done;
    }
    match ran {
        // Parked at its point (`park_here`) and another task was picked.
        Ran::Pending if parked_already => Next::Wait,
        Ran::Pending => {
            // Its future's poll returned: the next slice polls it anew.
            ex.tasks[id.0].poll = super::task::next_poll();
            after_pending(ex, id, request)
        }
        Ran::Finished => {
            ex.task_finished(id);
            Next::Done
        }
        Ran::Panicked(message) => {
            ex.task_panicked(id, message);
            Next::Done
        }
        Ran::Abandoned => Next::Done,
    }
}

/// A task whose future's poll returned `Pending`: parked on the request its poll made, kept
/// running past a crash, or blocked on its waker.
fn after_pending(ex: &mut Execution, id: TaskId, request: Option<(Op, u64)>) -> Next {
    match request {
        Some((op, token)) => match park(ex, id, op, token) {
            true => Next::Again,
            false => Next::Wait,
        },
        None if ex.take_reschedule() => {
            // It keeps the baton: resumed once a crash's victims are dropped (see `node`).
            ex.tasks[id.0].state = TaskState::Granted;
            ex.hand_to(id);
            Next::Wait
        }
        None => {
            // Pending without a request: blocked on its waker.
            ex.block_current();
            Next::Wait
        }
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
