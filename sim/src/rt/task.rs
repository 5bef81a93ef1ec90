//! Model tasks: spawned by name on madsim, parked on the baton between scheduling points, and
//! caught when they panic.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Once};
use std::task::{Context, Poll, Waker};

use super::coroutine::{self, Slice, Stackful};
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
    /// Its pending yield is tokio's (`sim::yield_like_tokio`): it may go on at once, before
    /// the others move, unless its last yield already did.
    pub yield_may_continue: bool,
    /// Its last yield went on at once: its next one is fair.
    pub continued_yield: bool,
    /// It is eligible now only by going on at once from its yield (set by `Execution::fair`).
    pub skipping_yield: bool,
    /// Cancelled (`sim::task::cancel`): it unwinds at its next await that parks it.
    pub cancelled: bool,
    /// The request (see `Point`) it is parked on, until the point that made it goes on.
    pub parked_token: Option<u64>,
    /// The node it belongs to (see `node`), and whether a crash killed it.
    pub node: Option<usize>,
    pub killed: bool,
    /// It serves the run rather than the test (a network's delivery, a fault site): waiting,
    /// it never makes the run a deadlock (see `sim::task::spawn_daemon`).
    pub daemon: bool,
    /// Its future has been dropped (madsim dropped the task).
    pub dropped: bool,
    /// What its pending step does, in the words of the primitive that parked it ("lock"),
    /// for traces (see `sync_point_labeled`).
    pub label: Option<Label>,
    /// What it waits on while blocked on its waker, as the primitive said (see
    /// `Execution::waits_on`).
    pub waits_on: Vec<WaitsOn>,
}

/// A step in its primitive's words: the operation ("lock") and, where the primitive was told,
/// the user's call site (`#[track_caller]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label {
    pub op: &'static str,
    pub at: Option<&'static std::panic::Location<'static>>,
}

impl Label {
    /// "lock mutex#1", or "lock mutex#1 at src/pool.rs:26".
    pub fn describe(&self, object: &str) -> String {
        match self.at {
            Some(at) => format!("{} {object} at {}:{}", self.op, at.file(), at.line()),
            None => format!("{} {object}", self.op),
        }
    }
}

/// What a task blocked on its waker waits for, in the primitive's words: the operation
/// ("recv"), the object, and what keeps it waiting ("empty"); who holds the object, the
/// engine knows (`Execution::hold`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitsOn {
    pub op: Label,
    pub object: super::ObjId,
    pub state: &'static str,
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
/// In a run of a model that asks for stackful tasks (`Model::stackful_tasks`) it runs on a
/// stack of its own, so that a synchronous operation can park it.
pub fn spawn<F>(name: impl Into<String>, future: F) -> TaskId
where
    F: Future<Output = ()> + 'static,
{
    let (id, stackful, flag) = with_exec(|ex| {
        let id = ex.add_task(name.into());
        let flag = Arc::new(TaskWake::default());
        ex.tasks[id.0].wake_flag = Some(flag.clone());
        (id, ex.stackful, flag)
    });
    let waker = Waker::from(flag);
    LIVE_TASKS.with(|n| n.set(n.get() + 1));
    match stackful {
        true => drop(madsim::task::spawn_local(ModelTask {
            id,
            body: stackful_body(future, waker),
        })),
        false => drop(madsim::task::spawn_local(ModelTask {
            id,
            body: Stackless { future, waker },
        })),
    }
    id
}

/// The future on a stack of its own, polled once per resume.
fn stackful_body<F>(future: F, waker: Waker) -> Stackful
where
    F: Future<Output = ()> + 'static,
{
    let mut future = Box::pin(future);
    Stackful::new(move || {
        let mut cx = Context::from_waker(&waker);
        future.as_mut().poll(&mut cx).is_ready()
    })
}

/// Model tasks whose future madsim has not dropped yet. Zero once a run is over and its
/// `block_on` has returned; otherwise the runtime is not reused (a stale task must never be
/// polled in a later run).
pub(crate) fn live_tasks() -> usize {
    LIVE_TASKS.with(Cell::get)
}

/// A scheduling point: the running task asks to park on `op`. Ready, with the value drawn
/// (when `op` is a `choose`), once the strategy has granted it that operation.
pub(crate) fn point(op: Op) -> Point {
    Point {
        op,
        token: None,
        yielded: false,
    }
}

/// A scheduling point. In a stackful task it parks synchronously (`sync_point`): whether
/// another task runs first is decided before the operation, inside the poll, so a ready
/// operation is ready when polled (a `biased;` `select!` takes the branch tokio would) and the
/// point never returns `Pending`.
///
/// In a stackless task it parks lazily: polling it only records a request, and the task parks
/// once its whole poll has returned (`ModelTask`). So a future may be dropped while waiting
/// here (a `select!` branch that lost, a `timeout` that fired), and one poll may reach several
/// points (a `select!` polling each branch): the first request of a poll is the one parked on,
/// and a point whose request was not parked on asks again when next polled. A lazy point keeps
/// the waker contract: polled with a waker that is not its task's own (a combinator's, such as
/// `FuturesUnordered`'s), it wakes that waker, so the combinator polls it again once the task
/// goes on.
pub(crate) struct Point {
    op: Op,
    /// The request this point made, while it waits.
    token: Option<u64>,
    /// A yield that went with another yield's park in the same poll: ready when polled again.
    yielded: bool,
}

impl Future for Point {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let op = self.op;
        let token = self.token;
        // A yield returns `Pending` once, as tokio's `yield_now` does (code may count on it: a
        // `select!` whose branch yields is not ready at its first poll): it parks lazily.
        if coroutine::in_stackful() {
            if op == Op::YieldNow {
                return self.yield_once(cx);
            }
            if token.is_none() {
                let choice = sync_point(op);
                if matches!(op, Op::Yield(_)) {
                    unwind_if_cancelled();
                }
                return Poll::Ready(choice);
            }
        }
        let polled = with_exec(|ex| {
            let me = ex
                .current
                .expect("a scheduling point is reached by a running task");
            let task = &mut ex.tasks[me.0];
            if token.is_some() && token == task.parked_token {
                // Granted: the task was parked on this very request.
                task.parked_token = None;
                self.token = None;
                return Poll::Ready(task.choice);
            }
            if ex.eager_points {
                return park_here(ex, me, op, &mut self.token);
            }
            self.token = ex.request(op);
            Poll::Pending
        });
        if polled.is_pending() && !is_own_waker(cx.waker()) {
            // Someone else's waker (a combinator polling this future among others): it must be
            // woken for this future to be polled again once the task is granted its point.
            cx.waker().wake_by_ref();
        }
        polled
    }
}

/// The payload a cancelled stackful task unwinds with from an await that parked it (see
/// `sim::task::cancel`): whoever runs the task catches it and ends the task as cancelled.
#[derive(Debug)]
pub struct Cancelled;

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

/// Unwinds the running task if it was cancelled (not while it is unwinding already).
fn unwind_if_cancelled() {
    let cancelled = !std::thread::panicking()
        && with_exec(|ex| ex.current.is_some_and(|me| ex.tasks[me.0].cancelled));
    if cancelled {
        panic::resume_unwind(Box::new(Cancelled));
    }
}

/// Whether `waker` is the running task's own (the one its body is polled with), which the
/// baton resumes without being woken.
fn is_own_waker(waker: &Waker) -> bool {
    with_exec(|ex| {
        let me = ex
            .current
            .expect("a scheduling point is reached by a running task");
        ex.tasks[me.0]
            .wake_flag
            .as_ref()
            .is_some_and(|flag| std::ptr::eq(Arc::as_ptr(flag).cast::<()>(), waker.data()))
    })
}

impl Point {
    /// A yield in a stackful task, as tokio's `yield_now`: `Pending` at its first poll, ready
    /// at its next. Its first poll asks to park (unless another yield of the same poll already
    /// did: they go together, as tokio's yields in one poll all complete at the next); if the
    /// task goes on without returning `Pending` (a `select!` took another branch), the request
    /// is withdrawn when the yield completes, as tokio's task would not have yielded either.
    fn yield_once(&mut self, cx: &mut Context<'_>) -> Poll<usize> {
        if self.yielded {
            if let Some(token) = self.token.take() {
                with_exec(|ex| {
                    let me = ex.current.expect("a running task");
                    let task = &mut ex.tasks[me.0];
                    if task.parked_token == Some(token) {
                        task.parked_token = None;
                    } else {
                        ex.withdraw(token);
                    }
                });
            }
            return Poll::Ready(0);
        }
        self.yielded = true;
        self.token = with_exec(|ex| ex.request(self.op));
        if !is_own_waker(cx.waker()) {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

/// Parks the running task at its point, for a model whose polls reach one point each
/// (`Model::one_point_per_poll`): picked again at once, it goes on in this same poll. The same
/// decision, at the same state, as `after_slice` makes once the poll has returned.
fn park_here(ex: &mut Execution, me: TaskId, op: Op, token: &mut Option<u64>) -> Poll<usize> {
    assert!(
        !ex.parked_in_slice,
        "task {} reached a second scheduling point ({op:?}) in a poll after parking: the model \
         declares Model::one_point_per_poll, which this task breaks (a join! or select! polls \
         several futures in one poll)",
        ex.tasks[me.0].name
    );
    let t = ex.next_token();
    if park(ex, me, op, t) {
        let task = &mut ex.tasks[me.0];
        task.parked_token = None;
        return Poll::Ready(task.choice);
    }
    ex.parked_in_slice = true;
    *token = Some(t);
    Poll::Pending
}

/// Parks task `id` on `op` (its request `token`) and lets the strategy decide; whether it was
/// picked again at once.
fn park(ex: &mut Execution, id: TaskId, op: Op, token: u64) -> bool {
    ex.tasks[id.0].parked_token = Some(token);
    ex.park_current(op);
    ex.current == Some(id) && ex.tasks[id.0].take_grant()
}

impl Drop for Point {
    #[inline]
    fn drop(&mut self) {
        // Most points end granted, holding no token: their drop is this one check.
        if let Some(token) = self.token {
            withdraw_point(token);
        }
    }
}

/// A point dropped while it holds a request or is parked on: the request is withdrawn.
#[cold]
fn withdraw_point(token: u64) {
    super::try_with_exec(|ex| {
        // Under eager points a point holds a token only while its task is parked on it, so
        // this search runs only for a breach (or as the run ends).
        if ex.eager_points && !ex.is_over() && !std::thread::panicking() {
            let parked = ex
                .tasks
                .iter()
                .find(|t| t.parked_token == Some(token) && !t.killed);
            if let Some(task) = parked {
                panic!(
                    "task {} dropped the scheduling point it is parked on: the model declares \
                     Model::one_point_per_poll, which this task breaks (a select! or timeout \
                     dropped a future waiting at a point)",
                    task.name
                );
            }
        }
        ex.withdraw(token)
    });
}

/// A synchronous scheduling point: the running task parks on `op` in the middle of its poll,
/// which only a stackful task can do; in any other task it is not a scheduling point. Returns
/// the value drawn when `op` is a `choose`.
pub(crate) fn sync_point(op: Op) -> usize {
    sync_point_labeled(op, None)
}

/// `sync_point`, with the step named in traces by `label` and its object ("lock mutex#1")
/// rather than by the engine's operation ("write mutex#1").
pub(crate) fn sync_point_labeled(op: Op, label: Option<Label>) -> usize {
    // A task unwinding from a panic does not park: its panic ends the run (or reaches its
    // joiner) whatever the others do, and a destructor must not wait on the baton mid-unwind.
    if !coroutine::in_stackful() || std::thread::panicking() {
        return 0;
    }
    let requested = with_exec(|ex| {
        if ex.is_over() {
            return None;
        }
        // A lazy point's request in this poll gives way: it asks again when next polled.
        ex.request = None;
        let token = ex.request(op);
        if let Some(me) = ex.current {
            ex.tasks[me.0].label = label;
        }
        token
    });
    let Some(token) = requested else {
        // The run is over: the task goes no further (it is unwound, never resumed), rather
        // than run on through points that no longer park it.
        coroutine::suspend();
        return 0;
    };
    coroutine::suspend();
    with_exec(|ex| {
        let Some(me) = ex.current else { return 0 };
        let task = &mut ex.tasks[me.0];
        if task.parked_token == Some(token) {
            task.parked_token = None;
        }
        task.choice
    })
}

/// A model task as madsim runs it: it runs only with the baton, parks on the request its
/// future made (or blocks on its waker when it made none), turns a panic into a violation, and
/// tells the execution when it is done.
///
/// It completes, dropping the model's future, as soon as the run is over. A task parked
/// forever (a server idle at quiescence, a task in a deadlock) must not outlive its run: madsim
/// keeps a waker of every pending task in the task's own bookkeeping, so a future that never
/// completes is never freed, and every run would leak its parked tasks.
///
/// A stackless task holds the model's future inline (madsim already puts the whole task on the
/// heap): spawning allocates no box of its own.
struct ModelTask<B> {
    id: TaskId,
    body: B,
}

/// The model's future, run one slice at a time: polled in place, or on a stack of its own.
trait Body {
    fn slice(self: Pin<&mut Self>) -> Ran;
}

/// A future polled in place.
struct Stackless<F> {
    future: F,
    /// The waker the model's future sees: it marks the task woken (see `TaskWake`), leaving
    /// madsim's waker to the baton.
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

impl Body for Stackful {
    fn slice(self: Pin<&mut Self>) -> Ran {
        match self.get_mut().resume() {
            Slice::Suspended => Ran::Pending,
            Slice::Finished => Ran::Finished,
            Slice::Panicked => Ran::Panicked(take_panic_message()),
            Slice::Abandoned => Ran::Abandoned,
        }
    }
}

/// The message (with its location) of the last panic in a model task on this thread, taken:
/// for a facade that catches a task's panic to hand it to the task's joiner.
pub fn take_last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// A task's panic was caught to be handed to its joiner (`message` says which task and why):
/// until `panic_observed` says the joiner took it, a run that ends fails with it (see
/// `Execution::finish`). Returns its number.
pub fn panic_caught(message: String) -> u64 {
    with_exec(|ex| ex.panic_caught(message))
}

/// The joiner took the caught panic number `id`.
pub fn panic_observed(id: u64) {
    super::try_with_exec(|ex| {
        ex.unobserved_panics.remove(&id);
    });
}

/// Whether a panic payload caught in a task is the engine unwinding an abandoned task (its run
/// is over, or its node crashed): it must be resumed (`std::panic::resume_unwind`), never kept.
pub fn is_engine_unwind(payload: &(dyn std::any::Any + Send)) -> bool {
    super::coroutine::is_abandon(payload)
}

#[cold]
fn take_panic_message() -> String {
    LAST_PANIC
        .with(|p| p.borrow_mut().take())
        .unwrap_or_else(|| "panic".to_string())
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

impl<B> Drop for ModelTask<B> {
    fn drop(&mut self) {
        LIVE_TASKS.with(|n| n.set(n.get() - 1));
        let id = self.id;
        super::try_with_exec(|ex| {
            if let Some(task) = ex.tasks.get_mut(id.0) {
                task.dropped = true;
            }
        });
    }
}

impl<B: Body> Future for ModelTask<B> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: structural pinning: `body` is never moved out, `id` is plain data.
        let this = unsafe { self.get_unchecked_mut() };
        let id = this.id;
        let go = with_exec(|ex| {
            if ex.is_over() || ex.tasks[id.0].killed {
                return None;
            }
            // madsim's waker hands the task the baton (see `Execution::decide`).
            let task = &mut ex.tasks[id.0];
            if !task.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                task.waker = Some(cx.waker().clone());
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
        loop {
            IN_MODEL.with(|m| m.set(true));
            // SAFETY: see above.
            let ran = unsafe { Pin::new_unchecked(&mut this.body) }.slice();
            IN_MODEL.with(|m| m.set(false));
            match with_exec(|ex| after_slice(ex, id, ran)) {
                Next::Again => continue,
                Next::Wait => return Poll::Pending,
                Next::Done => return Poll::Ready(()),
            }
        }
    }
}

/// What a task does after a slice of it ran.
enum Next {
    /// Picked again at once: it goes on without a round trip through madsim.
    Again,
    /// Parked or blocked: it waits for the baton.
    Wait,
    /// It ended, or its run did.
    Done,
}

fn after_slice(ex: &mut Execution, id: TaskId, ran: Ran) -> Next {
    // Every slice ends here, so the next one (of any task) starts with no request.
    let request = ex.request.take();
    let parked_already = std::mem::take(&mut ex.parked_in_slice);
    if ex.is_over() {
        return Next::Done;
    }
    match ran {
        // Parked at its point (`park_here`) and another task was picked.
        Ran::Pending if parked_already => Next::Wait,
        Ran::Pending => match request {
            Some((op, token)) => match park(ex, id, op, token) {
                true => Next::Again,
                false => Next::Wait,
            },
            None if std::mem::take(&mut ex.reschedule) => {
                // Hands the runtime back for a moment, keeping the baton (see `node`).
                let task = &mut ex.tasks[id.0];
                task.granted = true;
                if let Some(w) = &task.waker {
                    w.wake_by_ref();
                }
                Next::Wait
            }
            None => {
                // Pending without a request: blocked on its waker.
                ex.block_current();
                Next::Wait
            }
        },
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
