//! tokio's cooperative budget (`tokio::task::coop`): a task's poll may find tokio's resources
//! ready 128 times; past that they return `Pending`, and wake the task, so that its poll
//! returns and a `select!` or a `timeout` around a busy loop polls its other branches. A loop
//! over a channel that is always ready would otherwise never return (tokio's own broadcast and
//! watch tests count on the budget; without it braid cut such a loop as an endless one).
//!
//! The budget is kept per task and per top-level poll (`sim::current_poll`), not per thread as
//! tokio keeps it: a stackful task parks in the middle of its poll while others run. Outside a
//! task, and inside `unconstrained`, nothing is counted.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// What each poll of a task may make ready (tokio's `Budget::initial`).
const INITIAL: u8 = 128;

/// One task's budget in its current poll.
#[derive(Clone, Copy)]
struct Slot {
    poll: u64,
    left: u8,
    /// `unconstrained` futures being polled within this poll.
    unconstrained: u32,
}

impl Slot {
    /// The whole budget, at the start of poll `poll`.
    fn fresh(poll: u64) -> Slot {
        Slot {
            poll,
            left: INITIAL,
            unconstrained: 0,
        }
    }
}

thread_local! {
    /// By task number. A slot of an earlier poll (or run) is stale: its poll number differs.
    static BUDGETS: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

/// `f` on the running task's budget for its current poll; `None` outside a task.
fn with_budget<R>(f: impl FnOnce(&mut Slot) -> R) -> Option<R> {
    let (task, poll) = sim::current_poll()?;
    BUDGETS.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() <= task.0 {
            // Poll numbers start at 1: these are stale.
            b.resize(task.0 + 1, Slot::fresh(0));
        }
        let slot = &mut b[task.0];
        if slot.poll != poll {
            *slot = Slot::fresh(poll);
        }
        Some(f(slot))
    })
}

/// `f` on the running task's budget if its poll is still `poll` (what a guard made in that
/// poll gives back is void once the task has been polled anew).
fn in_poll(poll: u64, f: impl FnOnce(&mut Slot)) {
    let _ = with_budget(|slot| {
        if slot.poll == poll {
            f(slot);
        }
    });
}

/// Gives back the budget an operation took, unless it made progress (tokio's): an operation
/// that returns `Pending` after all costs nothing.
#[derive(Debug)]
#[must_use]
pub struct RestoreOnPending {
    /// The poll and the budget it had before the operation; `None` once it made progress, or
    /// when nothing was counted.
    before: Cell<Option<(u64, u8)>>,
}

impl RestoreOnPending {
    /// The operation made progress: its budget stays spent.
    pub fn made_progress(&self) {
        self.before.set(None);
    }

    /// The operation's result, its unit kept spent if it is ready (and given back if not).
    pub(crate) fn settle<T>(self, result: Poll<T>) -> Poll<T> {
        if result.is_ready() {
            self.made_progress();
        }
        result
    }
}

impl Drop for RestoreOnPending {
    fn drop(&mut self) {
        if let Some((poll, left)) = self.before.get() {
            in_poll(poll, |slot| slot.left = left);
        }
    }
}

/// Takes one unit of the running task's budget: `Pending` (the task woken, so it is polled
/// again) when it has none left, as tokio's `poll_proceed`.
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    // `None`: nothing is counted here (outside a task, or unconstrained).
    let counted = with_budget(|slot| match (slot.unconstrained, slot.left) {
        (0, 0) => Err(()),
        (0, left) => {
            slot.left -= 1;
            Ok(Some((slot.poll, left)))
        }
        _ => Ok(None),
    });
    match counted.unwrap_or(Ok(None)) {
        Ok(before) => Poll::Ready(RestoreOnPending {
            before: Cell::new(before),
        }),
        Err(()) => {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// `Pending` (the task woken) when the running task has no budget left: where tokio's
/// `select!` begins each poll, so that it does not poll branches that could not go on.
pub fn poll_budget_available(cx: &Context<'_>) -> Poll<()> {
    if has_budget_remaining() {
        Poll::Ready(())
    } else {
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Whether the running task has budget left in this poll.
pub fn has_budget_remaining() -> bool {
    with_budget(|slot| slot.unconstrained > 0 || slot.left > 0).unwrap_or(true)
}

/// Takes one unit of budget, returning `Pending` once first if none is left (tokio's).
pub async fn consume_budget() {
    let mut status = Poll::Pending;
    std::future::poll_fn(move |cx| {
        if status.is_ready() {
            return status;
        }
        status = poll_proceed(cx).map(|restore| restore.made_progress());
        status
    })
    .await
}

/// A future that takes one unit of budget before each poll of its own (tokio's `Coop`).
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Coop<F> {
    fut: F,
}

/// Has `fut` take one unit of budget at each poll, as tokio's own resources do.
pub fn cooperative<F: Future>(fut: F) -> Coop<F> {
    Coop { fut }
}

impl<F: Future> Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let coop = std::task::ready!(poll_proceed(cx));
        // SAFETY: structural pinning: `fut` is never moved out.
        let fut = unsafe { self.map_unchecked_mut(|c| &mut c.fut) };
        let ready = fut.poll(cx);
        if ready.is_ready() {
            coop.made_progress();
        }
        ready
    }
}

/// A future polled without a budget (tokio's `Unconstrained`).
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Unconstrained<F> {
    inner: F,
}

/// Polls `inner` without a budget: tokio's resources inside it never return `Pending` for
/// want of one.
pub fn unconstrained<F: Future>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: structural pinning: `inner` is never moved out.
        let inner = unsafe { self.map_unchecked_mut(|u| &mut u.inner) };
        with_unconstrained(|| inner.poll(cx))
    }
}

/// Runs `f` without a budget: tokio's resources it polls never return `Pending` for want of
/// one (for a `Timeout` whose future spent the last unit, to look at its deadline).
pub(crate) fn with_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    /// Ends the unconstrained stretch however `f` ends (a panic, an unwound task).
    struct Stretch(Option<u64>);
    impl Drop for Stretch {
        fn drop(&mut self) {
            if let Some(poll) = self.0 {
                in_poll(poll, |slot| {
                    slot.unconstrained = slot.unconstrained.saturating_sub(1)
                });
            }
        }
    }
    let _stretch = Stretch(with_budget(|slot| {
        slot.unconstrained += 1;
        slot.poll
    }));
    f()
}
