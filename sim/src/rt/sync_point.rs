//! Scheduling points inside synchronous code (an atomic load, a `try_send`): the running task
//! parks in the middle of a poll, which only a stackful task can do (see `rt::coroutine`). All
//! of them are here: the point itself, and the access-grain points the primitives place.

use std::task::Poll;

use super::coroutine;
use super::op::Op;
use super::point::park_in_place;
use super::task::Label;
use super::with_exec;
use crate::model::Grain;
use crate::vocab::AccessKind;
use crate::vocab::ObjId;

/// A scheduling point right before an access of `kind` to `obj`, at access grain.
pub(crate) fn before(obj: ObjId, kind: AccessKind) {
    at_access_grain(Op::Access(obj, kind));
}

/// `before`, the step named `label` in traces ("lock mutex#1").
pub(crate) fn before_as(obj: ObjId, kind: AccessKind, label: Label) {
    labeled_at_access_grain(Op::Access(obj, kind), Some(label));
}

/// A scheduling point on `op` at access grain; at await grain, nothing.
pub(crate) fn at_access_grain(op: Op) {
    labeled_at_access_grain(op, None);
}

fn labeled_at_access_grain(op: Op, label: Option<Label>) {
    if poll_at_access_grain(op, label).is_pending() {
        coroutine::abandon_here();
    }
}

/// `labeled_at_access_grain`, `Pending` where the task is being finished (see
/// `poll_sync_point`).
fn poll_at_access_grain(op: Op, label: Option<Label>) -> Poll<()> {
    if coroutine::in_stackful() && with_exec(|ex| ex.grain() == Grain::Access) {
        return poll_sync_point(op, label).map(|_| ());
    }
    Poll::Ready(())
}

/// A synchronous scheduling point: the running task parks on `op` in the middle of its poll,
/// which only a stackful task can do; in any other task it is not a scheduling point. Returns
/// the value drawn when `op` is a `choose`.
pub(crate) fn sync_point(op: Op) -> usize {
    sync_point_labeled(op, None)
}

/// `sync_point`, with the step named in traces by `label` and its object ("lock mutex#1")
/// rather than by the engine's operation ("write mutex#1"). A task finished meanwhile (its run
/// is over) unwinds: a synchronous operation cannot return `Pending`.
pub(crate) fn sync_point_labeled(op: Op, label: Option<Label>) -> usize {
    match poll_sync_point(op, label) {
        Poll::Ready(choice) => choice,
        Poll::Pending => coroutine::abandon_here(),
    }
}

/// `before_as`, in a future's own poll: `Pending` when the task is being finished (its run is
/// over), and the poll is to return `Pending` at once, having done nothing (at any grain).
pub(crate) fn poll_before_as(obj: ObjId, kind: AccessKind, label: Label) -> Poll<()> {
    if coroutine::finishing() {
        return Poll::Pending;
    }
    poll_at_access_grain(Op::Access(obj, kind), Some(label))
}

/// `sync_point_labeled` in a future's own poll, which can return `Pending`: `Pending` when the
/// task is being finished (see `rt::coroutine`).
pub(crate) fn poll_sync_point(op: Op, label: Option<Label>) -> Poll<usize> {
    // A task unwinding from a panic does not park: its panic ends the run (or reaches its
    // joiner) whatever the others do, and a destructor must not wait on the baton mid-unwind.
    if !coroutine::in_stackful() || std::thread::panicking() {
        return Poll::Ready(0);
    }
    if coroutine::finishing() {
        return Poll::Pending;
    }
    // The decision is made here, on the task's own stack: a task picked again goes on with no
    // switch of stacks (two a step, most steps under PCT and DFS); only one that must wait
    // suspends, parked already (as `park_here` parks a stackless task).
    let parked = with_exec(|ex| {
        if ex.is_over() {
            return None;
        }
        // A lazy point's request in this poll gives way: it asks again when next polled.
        ex.clear_request();
        let Some(me) = ex.current() else {
            // No task holds the baton: its slice's end parks it (see `after_slice`).
            return ex.request(op).map(Err);
        };
        ex.tasks[me.0].label = label;
        Some(park_in_place(ex, me, op))
    });
    let token = match parked {
        Some(Ok(choice)) => return Poll::Ready(choice),
        Some(Err(token)) => token,
        None => {
            // The run is over: the task goes no further (it is finished or unwound, never
            // resumed), rather than run on through points that no longer park it.
            std::task::ready!(coroutine::suspend_in_poll());
            return Poll::Ready(0);
        }
    };
    std::task::ready!(coroutine::suspend_in_poll());
    Poll::Ready(with_exec(|ex| {
        let Some(me) = ex.current() else { return 0 };
        let task = &mut ex.tasks[me.0];
        if task.parked_token == Some(token) {
            task.parked_token = None;
        }
        task.choice
    }))
}
