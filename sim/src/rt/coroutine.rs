//! Stackful tasks: a task whose future runs on a stack of its own, so that a synchronous
//! operation (an atomic load, a `try_send`) can park it in the middle of a poll, as shuttle
//! runs its tasks. Stacks are reused across runs (a run spawns a few tasks, thousands of runs
//! a second), and a task still parked when its run ends is unwound, not leaked.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// Each task's stack: enough for a test body's formatting and panics, mapped lazily by the OS.
const STACK_BYTES: usize = 256 * 1024;
/// Stacks kept for reuse per thread.
const POOL: usize = 64;

/// How a slice of a stackful task ended.
pub(crate) enum Slice {
    /// It returned `Pending` (its request, if any, is in the execution) or parked at a
    /// synchronous scheduling point.
    Suspended,
    /// Its future completed.
    Finished,
    /// It panicked (the panic hook kept the message).
    Panicked,
    /// It was unwound because its run is over.
    Abandoned,
}

/// What resuming a task tells it: go on, or unwind (its run is over).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resume {
    Go,
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
    /// A task is being unwound (its run is over or its node crashed): the code its unwinding
    /// runs (drops) reaches no scheduling point, since it cannot park again.
    static ABANDONING: Cell<bool> = const { Cell::new(false) };
}

impl Stackful {
    /// Runs `poll_once` (one poll of the task's future: whether it completed) on a stack of
    /// its own, once per resume.
    pub(crate) fn new(mut poll_once: impl FnMut() -> bool + 'static) -> Self {
        let stack = STACKS
            .with(|s| s.borrow_mut().pop())
            .unwrap_or_else(|| DefaultStack::new(STACK_BYTES).expect("a task stack"));
        let coroutine =
            Coroutine::with_stack(stack, move |yielder: &Yielder<Resume, ()>, first| {
                if first == Resume::Abandon {
                    return Slice::Abandoned;
                }
                loop {
                    YIELDER.with(|y| y.set(yielder));
                    let polled = panic::catch_unwind(AssertUnwindSafe(&mut poll_once));
                    YIELDER.with(|y| y.set(std::ptr::null()));
                    match polled {
                        Ok(false) => {}
                        Ok(true) => return Slice::Finished,
                        Err(payload) if payload.is::<Abandoned>() => return Slice::Abandoned,
                        Err(_) => return Slice::Panicked,
                    }
                    if yielder.suspend(()) == Resume::Abandon {
                        return Slice::Abandoned;
                    }
                }
            });
        Stackful {
            coroutine: Some(coroutine),
        }
    }

    /// Runs the task until it suspends or ends.
    pub(crate) fn resume(&mut self) -> Slice {
        self.resume_with(Resume::Go)
    }

    fn resume_with(&mut self, how: Resume) -> Slice {
        let Some(coroutine) = self.coroutine.as_mut() else {
            return Slice::Finished;
        };
        let abandoning = ABANDONING.with(|a| a.replace(how == Resume::Abandon));
        let result = coroutine.resume(how);
        ABANDONING.with(|a| a.set(abandoning));
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

/// Parks the running stackful task in the middle of its poll (its request is in the
/// execution); returns once it may go on. Does nothing when the running task is not stackful
/// or is being unwound (it cannot park here).
pub(crate) fn suspend() {
    let yielder = YIELDER.with(Cell::get);
    if yielder.is_null() || ABANDONING.with(Cell::get) {
        return;
    }
    YIELDER.with(|y| y.set(std::ptr::null()));
    // SAFETY: the pointer was set by the running coroutine from its own yielder, which lives
    // as long as the coroutine, and is cleared whenever that coroutine is not running.
    let how = unsafe { &*yielder }.suspend(());
    YIELDER.with(|y| y.set(yielder));
    if how == Resume::Abandon {
        panic::resume_unwind(Box::new(Abandoned));
    }
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
