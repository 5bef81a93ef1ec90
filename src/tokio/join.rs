//! `tokio::spawn` and `tokio::task::JoinHandle`: awaiting the handle waits on a waker (so it
//! can lose a `select!` or a `timeout` and be dropped cleanly), and `abort` cancels the task.
//!
//! Cancellation needs no hook in the engine: the task runs inside a wrapper that checks the
//! abort flag each time the engine polls it. The engine polls a task only when it grants it
//! the baton, so the task's future is dropped at its next step after `abort`: at once if it
//! was waiting on a waker (`abort` wakes it), at its next scheduling point otherwise, before
//! its first poll if it never started. Its destructors run then, in its own step, and its
//! join yields a cancelled `JoinError`. (A task parked on one of `braid::sync`'s primitives,
//! which the engine itself keeps disabled, is dropped once that primitive lets it go on.)
//!
//! A task's end is a step of its own, as in tokio, where another thread may run between a
//! task's last operation and the moment its handle reports it finished. A task that panics
//! ends with its panic, which its joiner receives as a `JoinError` (`is_panic`,
//! `into_panic`). A panic nobody observes (the handle dropped or never awaited by the end of
//! the run) still fails the run at its end: braid is stricter than tokio there, which would
//! only print it, since a test that never looks would otherwise pass with a task that died.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use super::lock;
use sim::sync::Shared;

const RUNNING: u8 = 0;
/// `abort` was called; the task has not seen it yet.
const ABORTING: u8 = 1;
const FINISHED: u8 = 2;
const CANCELLED: u8 = 3;
/// The output was taken by the join.
const JOINED: u8 = 4;
/// The task panicked; its joiner gets the panic.
const PANICKED: u8 = 5;

/// What the handle and the task share, besides the output: the state the engine sees (a
/// write when the task ends or is aborted, a read when someone looks), and the two wakers.
/// Each is behind a `std::sync::Mutex` (never contended: one thread runs a simulation, and each
/// is held for one statement), so that a `JoinHandle<T>` is `Send + Sync` when `T: Send`, as
/// tokio's.
struct Control {
    state: Shared<u8>,
    /// The task's own waker, from its last poll: `abort` wakes a task waiting on a waker.
    task_waker: Mutex<Option<Waker>>,
    /// Whoever awaits the handle.
    join_waker: Mutex<Option<Waker>>,
    /// The task's panic, until its joiner takes it.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// The engine's number for its panic, while nobody has observed it.
    unobserved: Mutex<Option<u64>>,
    /// The engine's task, once spawned (to cancel it at its next await).
    task: Mutex<Option<sim::TaskId>>,
}

impl Control {
    /// The task ended (`FINISHED`) or was dropped (`CANCELLED`).
    fn end(&self, how: u8) {
        self.state.with_mut(|s| *s = how);
        let waker = lock(&self.join_waker).take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn abort(&self) {
        self.state.write_point_as("abort");
        let aborting = self.state.with_mut(|s| {
            if *s == RUNNING {
                *s = ABORTING;
            }
            *s == ABORTING
        });
        if aborting {
            if let Some(task) = *lock(&self.task) {
                // A task parked at an await in the middle of its poll (a yield) unwinds from
                // there when it goes on; one waiting on a waker is woken and dropped below.
                sim::task::cancel(task);
            }
            let waker = lock(&self.task_waker).take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    fn is_finished(&self) -> bool {
        self.state.read_point_as("is_finished");
        self.state
            .with(|s| matches!(*s, FINISHED | CANCELLED | JOINED | PANICKED))
    }

    /// The task panicked with `payload`: its joiner will get it, and the run fails when it
    /// ends unless someone does (`sim::task::panic_caught`).
    fn panicked(&self, payload: Box<dyn Any + Send>) {
        let message = sim::task::take_last_panic().unwrap_or_else(|| panic_text(&*payload));
        let name = sim::current_task_name();
        let id = sim::task::panic_caught(format!("task {name} panicked: {message}"));
        *lock(&self.unobserved) = Some(id);
        *lock(&self.panic) = Some(payload);
        self.end(PANICKED);
    }

    /// The joiner takes the panic: observed.
    fn take_panic(&self) -> Option<Box<dyn Any + Send>> {
        if let Some(id) = lock(&self.unobserved).take() {
            sim::task::panic_observed(id);
        }
        lock(&self.panic).take()
    }
}

/// A panic's message, from its payload.
fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_string())
}

/// Spawns a task, as `tokio::spawn` (named `task`, `task#2`, ... in traces). Unlike tokio's,
/// the future need not be `Send`: a run is single-threaded. The handle is `Send` (and `Sync`)
/// when the output is, as tokio's.
///
/// ```
/// use braid::tokio;
///
/// braid::check(|| async {
///     let handle = tokio::spawn(async { 6 * 7 });
///     assert_eq!(handle.await.unwrap(), 42);
/// })
/// .assert_holds();
/// ```
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let control = Arc::new(Control {
        state: Shared::new(sim::sync::auto_name("join"), RUNNING),
        task_waker: Mutex::new(None),
        join_waker: Mutex::new(None),
        panic: Mutex::new(None),
        unobserved: Mutex::new(None),
        task: Mutex::new(None),
    });
    let output = Arc::new(Mutex::new(None));
    // Through braid's front door, so the task is whatever kind of task braid's tasks are.
    let handle = crate::task::spawn(Abortable {
        control: control.clone(),
        output: output.clone(),
        future: Some(Box::pin(future)),
    });
    *lock(&control.task) = Some(handle.id());
    // Its end is what a joiner waits for: a deadlock names the task.
    control.state.held_by(handle.id());
    JoinHandle {
        control,
        output,
        polled: false,
    }
}

/// The task as the engine runs it: the user's future, dropped at the first poll after `abort`.
struct Abortable<F: Future> {
    control: Arc<Control>,
    output: Arc<Mutex<Option<F::Output>>>,
    future: Option<Pin<Box<F>>>,
}

impl<F: Future> Future for Abortable<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let Some(future) = this.future.as_mut() else {
            return Poll::Ready(());
        };
        if this.control.state.with(|s| *s == ABORTING) {
            // Dropped here, in the task's own step: its destructors run as this task.
            this.future = None;
            this.control.end(CANCELLED);
            return Poll::Ready(());
        }
        {
            let mut waker = lock(&this.control.task_waker);
            let stale = match waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                true => None,
                false => waker.replace(cx.waker().clone()),
            };
            // Outside the slot's lock: a waker's drop may reach this task's handle again.
            drop(waker);
            drop(stale);
        }
        match panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => {
                this.future = None;
                // The end is a step of its own: another task may run between the task's last
                // operation and its handle saying it has finished.
                this.control.state.write_point_as("end");
                *lock(&this.output) = Some(value);
                this.control.end(FINISHED);
                Poll::Ready(())
            }
            Err(payload) if sim::task::is_engine_unwind(&*payload) => panic::resume_unwind(payload),
            Err(payload) if payload.is::<sim::task::Cancelled>() => {
                // Aborted while parked at an await: dropped there, in its own step.
                this.future = None;
                this.control.end(CANCELLED);
                Poll::Ready(())
            }
            Err(payload) => {
                // Dropped as tokio drops a panicked task's future, then handed to the joiner.
                this.future = None;
                this.control.panicked(payload);
                Poll::Ready(())
            }
        }
    }
}

/// Awaits a spawned task's output, as `tokio::task::JoinHandle`. Dropping it detaches the
/// task (it goes on); [`abort`](Self::abort) cancels it.
pub struct JoinHandle<T> {
    control: Arc<Control>,
    output: Arc<Mutex<Option<T>>>,
    polled: bool,
}

impl<T> JoinHandle<T> {
    /// Cancels the task: its future is dropped at its next step (see the module doc), and
    /// awaiting this handle then yields a `JoinError` whose `is_cancelled()` is true. No
    /// effect on a task that has finished: its output is still there.
    pub fn abort(&self) {
        self.control.abort();
    }

    /// Whether the task has finished, or was dropped after `abort`.
    pub fn is_finished(&self) -> bool {
        self.control.is_finished()
    }

    /// A handle that can abort the task but not join it.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            control: self.control.clone(),
        }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let coop = std::task::ready!(crate::tokio::coop::poll_proceed(cx));
        if !this.polled {
            std::task::ready!(this.control.state.poll_read_point_at("join", None));
            this.polled = true;
        }
        let control = &this.control;
        let state = control.state.with_mut(|s| {
            if *s == FINISHED {
                *s = JOINED;
                return FINISHED;
            }
            *s
        });
        let ready = match state {
            FINISHED => {
                let value = lock(&this.output).take().expect("a finished task's output");
                Poll::Ready(Ok(value))
            }
            CANCELLED => Poll::Ready(Err(JoinError {
                repr: Repr::Cancelled,
            })),
            PANICKED => Poll::Ready(Err(JoinError {
                repr: match control.take_panic() {
                    Some(payload) => Repr::Panic(Mutex::new(payload)),
                    None => Repr::Taken,
                },
            })),
            JOINED => Poll::Ready(Err(JoinError { repr: Repr::Taken })),
            _ => {
                let stale = lock(&control.join_waker).replace(cx.waker().clone());
                drop(stale);
                control.state.waiting("join", "{holders} has not finished");
                return Poll::Pending;
            }
        };
        coop.made_progress();
        ready
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// Aborts a task without joining it, as `tokio::task::AbortHandle`.
#[derive(Clone)]
pub struct AbortHandle {
    control: Arc<Control>,
}

impl AbortHandle {
    /// As [`JoinHandle::abort`].
    pub fn abort(&self) {
        self.control.abort();
    }

    /// As [`JoinHandle::is_finished`].
    pub fn is_finished(&self) -> bool {
        self.control.is_finished()
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle").finish_non_exhaustive()
    }
}

/// A task that ended without an output for its join: it was aborted (`is_cancelled`), it
/// panicked (`is_panic`, `into_panic`), or its output was already taken.
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    /// In a `Mutex` only to be `Sync` without the payload being so, as tokio's `JoinError`.
    Panic(Mutex<Box<dyn Any + Send>>),
    /// Polled again after it completed (tokio panics there; braid says so in the error).
    Taken,
}

impl JoinError {
    /// Whether the task was aborted.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// Whether the task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The task's panic payload, to resume it (`std::panic::resume_unwind`).
    ///
    /// # Panics
    /// When the error is not a panic, as tokio's.
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError` reason is not a panic.")
    }

    /// The task's panic payload, or the error itself when it is not a panic.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(payload) => {
                Ok(payload.into_inner().unwrap_or_else(PoisonError::into_inner))
            }
            repr => Err(JoinError { repr }),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::Panic(p) => write!(f, "JoinError::Panic({:?}, ...)", panic_text(&**lock(p))),
            Repr::Taken => f.write_str("JoinError::AlreadyJoined"),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("task was cancelled"),
            Repr::Panic(p) => {
                let text = panic_text(&**lock(p));
                write!(f, "task panicked with message {text:?}")
            }
            Repr::Taken => f.write_str("task's output was already taken"),
        }
    }
}

impl std::error::Error for JoinError {}
