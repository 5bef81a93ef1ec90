//! Scheduling points that are not tied to an object.

use std::hash::Hash;

use crate::digest::{mix, of};
use crate::rt::op::Op;
use crate::rt::point::point;
use crate::rt::{tracks_values, with_exec};

/// Stands for a real `.await` (a database call, a storage read): any task may run here.
pub async fn yield_point(label: &'static str) {
    point(Op::Yield(label)).await;
}

/// A fair yield, as `tokio::task::yield_now` in a spin or retry loop means it: let the others
/// run. Every strategy, DFS included, then picks this task again only once each task that was
/// enabled when it yielded has taken a step (or stopped being enabled), and moving off it is
/// not a preemption; a schedule that goes on like that without progress is a `livelock`.
/// (`yield_point`, by contrast, is an I/O await at which anything may happen next.)
pub async fn yield_now() {
    point(Op::YieldNow).await;
}

/// `tokio::task::yield_now` as tokio means it: the others may run first, or the yielder may be
/// polled again at once, before they move. Going on at once is allowed once per cycle of
/// yields: if its last yield went on at once, this one is fair (`yield_now`), so a spin-wait
/// still lets the others move and stays finite for every strategy.
pub async fn yield_like_tokio() {
    with_exec(|ex| {
        if let Some(me) = ex.current() {
            ex.tasks[me.0].yield_may_continue = true;
        }
    });
    point(Op::YieldNow).await;
}

/// Data nondeterminism: a value in `0..n` chosen by the strategy (does this check fail?).
pub async fn choose(n: usize) -> usize {
    assert!(n > 0, "choose needs at least one alternative");
    point(Op::Choose(n)).await
}

/// `choose` from inside a poll (a `select!` picking where to start each time it is polled):
/// `Ready(None)` when the running task cannot park mid-poll (it is not stackful), and `Pending`
/// when the run is over and the task is being finished: the poll is to return `Pending` at
/// once (see `rt::coroutine`).
pub fn choose_in_poll(n: usize) -> std::task::Poll<Option<usize>> {
    assert!(n > 0, "choose needs at least one alternative");
    if !crate::rt::coroutine::in_stackful() {
        return std::task::Poll::Ready(None);
    }
    crate::rt::sync_point::poll_sync_point(Op::Choose(n), None).map(Some)
}

/// Declares, at a loop head `label`, everything the running task's future depends on besides
/// the engine objects it reads: its fields and variables that live across iterations. A search
/// by state (`Model::state_visible`) then treats two visits of the loop head with equal `locals`
/// and equal shared state as one state, so a server's loop that went round once more without
/// changing anything adds nothing to explore. Not a scheduling point; without a state search it
/// does nothing.
pub fn checkpoint<T: Hash + ?Sized>(label: &'static str, locals: &T) {
    if tracks_values() {
        with_exec(|ex| ex.checkpoint(|| mix(of(label), of(locals))));
    }
}

/// Has the engine judge `monitor` too when the run reaches quiescence, after the model's own
/// (properties a test declares during a run, such as `braid::eventually`).
pub fn watch(monitor: std::rc::Rc<dyn crate::Monitor>) {
    with_exec(|ex| ex.watch(monitor));
}

/// The running task's name (`task#2`), for messages; `?` outside a task.
pub fn current_task_name() -> String {
    with_exec(|ex| match ex.current() {
        Some(t) => ex.tasks[t.0].name.to_string(),
        None => "?".to_string(),
    })
}

/// Whether a run is in progress on this thread and can take note of an operation (a guard or a
/// channel half dropped while the runtime tears down a finished run cannot).
pub fn engine_running() -> bool {
    // A task being finished after its run (see `rt::coroutine`) that reaches a primitive has
    // run on past the point its poll was to return at: it is unwound here, rather than go on
    // through primitives that no longer park it.
    if crate::rt::coroutine::finishing() {
        crate::rt::coroutine::abandon_here();
    }
    let mut running = false;
    crate::rt::try_with_exec(|ex| running = !ex.is_over());
    running
}

/// The task running now in the run in progress on this thread, if any (what a task-local value
/// is keyed by: tasks run stackful, so a thread-local alone would leak into a task that runs
/// while another is parked in the middle of a poll).
pub fn current_task() -> Option<crate::TaskId> {
    let mut task = None;
    crate::rt::try_with_exec(|ex| task = ex.current());
    task
}

/// The running task and its current top-level poll, by a number no other poll on this thread
/// has had: what is kept per poll is kept by it (tokio's cooperative budget; a stackful task
/// parks in the middle of a poll while others run, so a thread-local alone would not do).
pub fn current_poll() -> Option<(crate::TaskId, u64)> {
    let mut poll = None;
    crate::rt::try_with_exec(|ex| poll = ex.current().map(|t| (t, ex.tasks[t.0].poll)));
    poll
}
