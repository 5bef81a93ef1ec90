//! Stackful tasks: a task whose future runs on a stack of its own, so that a synchronous
//! operation (an atomic load, a `try_send`) can park it in the middle of a poll, as shuttle
//! runs its tasks. Stacks are reused across runs (a run spawns a few tasks, thousands of runs
//! a second), and a task still parked when its run ends is finished or unwound, not leaked.
//!
//! A task left parked when its run is over is *finished*: resumed once more, the point it
//! waits at inside a poll returns `Pending` (an await's point, or a facade future's point in
//! its own poll), so its poll returns as a poll does, and its future is then dropped between
//! polls, as tokio drops the tasks left when a runtime shuts down. Unwinding it instead cost
//! about 1.7 us a task (the unwinder's table lookups, per frame): 65% of a run that leaves three
//! tasks waiting on a `Notify` (`peers --bin overhead`). A point that cannot return `Pending` (a
//! synchronous operation's), reached while finishing, unwinds as before; so does a crash's
//! victim, which must not run on.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::task::{Context, Waker};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// Each task's stack: enough for a test body's formatting and panics, mapped lazily by the OS.
const STACK_BYTES: usize = 256 * 1024;
/// Stacks kept for reuse per thread.
const POOL: usize = 64;
/// The largest future kept on its task's stack rather than boxed (see `Stackful::new`).
const INLINE_FUTURE: usize = 768;

/// How a slice of a stackful task ended.
pub(crate) enum Slice {
    /// It returned `Pending` (its request, if any, is in the execution) or parked at a
    /// synchronous scheduling point.
    Suspended,
    /// Its future completed.
    Finished,
    /// It panicked (the panic hook kept the message).
    Panicked,
    /// Its run is over (it was finished, or unwound) or its node crashed (it was unwound).
    Abandoned,
}

/// What resuming a task tells it: go on, finish (its run is over: return from its poll), or
/// unwind (its node crashed).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resume {
    Go,
    Finish,
    Abandon,
}

/// The payload that unwinds an abandoned task from a synchronous scheduling point; no panic
/// hook sees it (`resume_unwind`).
struct Abandoned;

type Body = Coroutine<Resume, (), Slice, DefaultStack>;

pub(crate) struct Stackful {
    coroutine: Option<Body>,
}

thread_local! {
    /// The yielder of the stackful task running on this thread, while it runs.
    static YIELDER: Cell<*const Yielder<Resume, ()>> = const { Cell::new(std::ptr::null()) };
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
    /// A task is being unwound or dropped (its run is over or its node crashed): the code its
    /// unwinding runs (drops) reaches no scheduling point, since it cannot park again.
    static ABANDONING: Cell<bool> = const { Cell::new(false) };
    /// A task is being finished (its run is over): its points in polls return `Pending`.
    static FINISHING: Cell<bool> = const { Cell::new(false) };
}

impl Stackful {
    /// Runs `future` on a stack of its own, one poll per resume. A small future lives on that
    /// stack (pinned in the coroutine's first frame, which never moves), not in a box: one
    /// allocation less a spawn. corosensei moves the coroutine's closure onto its stack and
    /// takes one of 1 KB at most, so a larger future is boxed.
    pub(crate) fn new<F: Future<Output = ()> + 'static>(future: F, waker: Waker) -> Self {
        match std::mem::size_of::<F>() <= INLINE_FUTURE {
            true => Self::on_stack(future, waker),
            false => Self::on_stack(Box::pin(future), waker),
        }
    }

    fn on_stack<F: Future<Output = ()> + 'static>(future: F, waker: Waker) -> Self {
        let stack = STACKS
            .with(|s| s.borrow_mut().pop())
            .unwrap_or_else(|| DefaultStack::new(STACK_BYTES).expect("a task stack"));
        let coroutine =
            Coroutine::with_stack(stack, move |yielder: &Yielder<Resume, ()>, first| {
                let mut future = pin!(Some(future));
                let slice = match first {
                    // Never polled.
                    Resume::Finish | Resume::Abandon => Slice::Abandoned,
                    Resume::Go => loop {
                        YIELDER.with(|y| y.set(yielder));
                        let polled =
                            panic::catch_unwind(AssertUnwindSafe(|| poll(future.as_mut(), &waker)));
                        YIELDER.with(|y| y.set(std::ptr::null()));
                        break match polled {
                            Ok(false) if FINISHING.with(Cell::get) => Slice::Abandoned,
                            Ok(false) => match yielder.suspend(()) {
                                Resume::Go => continue,
                                Resume::Finish | Resume::Abandon => Slice::Abandoned,
                            },
                            Ok(true) => Slice::Finished,
                            Err(payload) if payload.is::<Abandoned>() => Slice::Abandoned,
                            Err(_) => Slice::Panicked,
                        };
                    },
                };
                // The future is dropped here, in place on its own stack, where no point parks.
                stop_parking();
                future.set(None);
                slice
            });
        Stackful {
            coroutine: Some(coroutine),
        }
    }

    /// Runs the task until it suspends or ends.
    pub(crate) fn resume(&mut self) -> Slice {
        self.resume_with(Resume::Go)
    }

    /// Finishes a task whose run is over (see the module docs): whatever the slice, its future
    /// has been dropped by the time this returns.
    pub(crate) fn finish(&mut self) -> Slice {
        self.resume_with(Resume::Finish)
    }

    fn resume_with(&mut self, how: Resume) -> Slice {
        let Some(coroutine) = self.coroutine.as_mut() else {
            return Slice::Finished;
        };
        let abandoning = ABANDONING.with(|a| a.replace(how == Resume::Abandon));
        let finishing = FINISHING.with(|f| f.replace(how == Resume::Finish));
        let result = coroutine.resume(how);
        ABANDONING.with(|a| a.set(abandoning));
        FINISHING.with(|f| f.set(finishing));
        match result {
            CoroutineResult::Yield(()) => Slice::Suspended,
            CoroutineResult::Return(end) => {
                self.recycle();
                end
            }
        }
    }

    fn recycle(&mut self) {
        if let Some(coroutine) = self.coroutine.take() {
            if !coroutine.done() {
                // Still parked (it reached a scheduling point while unwinding): corosensei's
                // own drop unwinds it, and the stack goes with it.
                return;
            }
            let stack = coroutine.into_stack();
            STACKS.with(|s| {
                let mut s = s.borrow_mut();
                if s.len() < POOL {
                    s.push(stack);
                }
            });
        }
    }
}

impl Drop for Stackful {
    /// Unwinds a task that has not ended (its run is over), dropping its future on its own
    /// stack, and keeps the stack.
    fn drop(&mut self) {
        if self.coroutine.as_ref().is_some_and(|c| !c.done()) {
            self.resume_with(Resume::Abandon);
        }
        self.recycle();
    }
}

/// One poll of a task's future: whether it completed.
fn poll<F: Future<Output = ()>>(future: Pin<&mut Option<F>>, waker: &Waker) -> bool {
    let future = future
        .as_pin_mut()
        .expect("a task's future is polled until it ends");
    future.poll(&mut Context::from_waker(waker)).is_ready()
}

/// Parks the running stackful task in the middle of its poll (its request is in the
/// execution); ready once it may go on. Ready at once when the running task is not stackful
/// or is being unwound (it cannot park here). `Pending` when the task is being finished: its
/// poll is to return `Pending` at once, or, in a synchronous operation, it unwinds (see the
/// module docs). A task abandoned meanwhile unwinds.
pub(crate) fn suspend_in_poll() -> std::task::Poll<()> {
    let yielder = YIELDER.with(Cell::get);
    if yielder.is_null() || ABANDONING.with(Cell::get) {
        return std::task::Poll::Ready(());
    }
    if FINISHING.with(Cell::get) {
        return std::task::Poll::Pending;
    }
    YIELDER.with(|y| y.set(std::ptr::null()));
    // SAFETY: the pointer was set by the running coroutine from its own yielder, which lives
    // as long as the coroutine, and is cleared whenever that coroutine is not running.
    let how = unsafe { &*yielder }.suspend(());
    YIELDER.with(|y| y.set(yielder));
    match how {
        Resume::Go => std::task::Poll::Ready(()),
        Resume::Finish => std::task::Poll::Pending,
        Resume::Abandon => abandon_here(),
    }
}

/// Whether the running task is being finished (its run is over): a point in a poll returns
/// `Pending`, and one that cannot (a synchronous operation's) unwinds (`abandon_here`).
pub(crate) fn finishing() -> bool {
    FINISHING.with(Cell::get)
}

/// Unwinds the running task: its run is over or its node crashed.
pub(crate) fn abandon_here() -> ! {
    // The destructors the unwinding runs reach no point, as in any abandoned task.
    stop_parking();
    panic::resume_unwind(Box::new(Abandoned))
}

/// From here on the running task is dropped, not polled: no point parks it (`resume_with`
/// restores the flags once it has returned).
fn stop_parking() {
    ABANDONING.with(|a| a.set(true));
    FINISHING.with(|f| f.set(false));
}

/// Whether `payload` is the engine's own unwinding of an abandoned task (its run is over or its
/// node crashed), which no code caught in a task may keep from unwinding.
pub(crate) fn is_abandon(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<Abandoned>()
}

/// Whether the running task is stackful (a synchronous scheduling point can park it).
pub(crate) fn in_stackful() -> bool {
    !YIELDER.with(Cell::get).is_null() && !ABANDONING.with(Cell::get)
}
