//! Scheduling points in async code: a future that asks to park its task on an operation and
//! is ready once the strategy has granted it (lazily in a stackless task, at once in a stackful
//! one), and withdraws its request if it is dropped first.

use std::future::Future;
use std::panic;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::coroutine;
use super::execution::Execution;
use super::op::Op;
use super::sync_point::poll_sync_point;
use super::with_exec;
use crate::vocab::TaskId;

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
        if coroutine::finishing() {
            // The run is over and this task is being finished: its poll returns.
            return Poll::Pending;
        }
        // A yield returns `Pending` once, as tokio's `yield_now` does (code may count on it: a
        // `select!` whose branch yields is not ready at its first poll): it parks lazily.
        if coroutine::in_stackful() {
            if op == Op::YieldNow {
                return self.yield_once(cx);
            }
            if token.is_none() {
                let choice = std::task::ready!(poll_sync_point(op, None));
                if matches!(op, Op::Yield(_)) {
                    unwind_if_cancelled();
                }
                return Poll::Ready(choice);
            }
        }
        let polled = with_exec(|ex| {
            let me = ex
                .current()
                .expect("a scheduling point is reached by a running task");
            let task = &mut ex.tasks[me.0];
            if token.is_some() && token == task.parked_token {
                // Granted: the task was parked on this very request.
                task.parked_token = None;
                self.token = None;
                return Poll::Ready(task.choice);
            }
            if ex.eager_points() {
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

/// Unwinds the running task if it was cancelled (not while it is unwinding already).
fn unwind_if_cancelled() {
    let cancelled = !std::thread::panicking()
        && with_exec(|ex| ex.current().is_some_and(|me| ex.tasks[me.0].cancelled));
    if cancelled {
        panic::resume_unwind(Box::new(Cancelled));
    }
}

/// Whether `waker` is the running task's own (the one its body is polled with), which the
/// baton resumes without being woken.
fn is_own_waker(waker: &Waker) -> bool {
    with_exec(|ex| {
        // The point's park ended the run (no task holds the baton): nobody is to be woken.
        // (This used to panic here, a panic caught and unwound at the end of most runs of the
        // models: a fifth of their time.)
        let Some(me) = ex.current() else {
            return true;
        };
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
                    let me = ex.current().expect("a running task");
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
        !ex.parked_in_slice(),
        "task {} reached a second scheduling point ({op:?}) in a poll after parking: the model \
         declares Model::one_point_per_poll, which this task breaks (a join! or select! polls \
         several futures in one poll)",
        ex.tasks[me.0].name
    );
    match park_in_place(ex, me, op) {
        Ok(choice) => Poll::Ready(choice),
        Err(t) => {
            *token = Some(t);
            Poll::Pending
        }
    }
}

/// Parks the running task `me` on `op` where it is and lets the strategy decide: the value
/// drawn if it was picked again at once (it goes on in the same slice), else the token of the
/// request it now waits on, parked in this slice (`after_slice` leaves it parked).
pub(super) fn park_in_place(ex: &mut Execution, me: TaskId, op: Op) -> Result<usize, u64> {
    let t = ex.next_token();
    if park(ex, me, op, t) {
        let task = &mut ex.tasks[me.0];
        task.parked_token = None;
        return Ok(task.choice);
    }
    ex.set_parked_in_slice();
    Err(t)
}

/// Parks task `id` on `op` (its request `token`) and lets the strategy decide; whether it was
/// picked again at once.
pub(super) fn park(ex: &mut Execution, id: TaskId, op: Op, token: u64) -> bool {
    ex.tasks[id.0].parked_token = Some(token);
    ex.park_current(op);
    ex.current() == Some(id) && ex.tasks[id.0].take_grant()
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
        if ex.eager_points() && !ex.is_over() && !std::thread::panicking() {
            let parked = ex
                .tasks
                .iter()
                .find(|t| t.parked_token == Some(token) && !t.state.is_killed());
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
