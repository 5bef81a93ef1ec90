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

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use sim::sync::Shared;

const RUNNING: u8 = 0;
/// `abort` was called; the task has not seen it yet.
const ABORTING: u8 = 1;
const FINISHED: u8 = 2;
const CANCELLED: u8 = 3;
/// The output was taken by the join.
const JOINED: u8 = 4;

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
}

/// A waker slot or the output slot, locked.
fn lock<T>(slot: &Mutex<T>) -> MutexGuard<'_, T> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
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
        self.state.write_point();
        let aborting = self.state.with_mut(|s| {
            if *s == RUNNING {
                *s = ABORTING;
            }
            *s == ABORTING
        });
        if aborting {
            let waker = lock(&self.task_waker).take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    fn is_finished(&self) -> bool {
        self.state.read_point();
        self.state
            .with(|s| matches!(*s, FINISHED | CANCELLED | JOINED))
    }
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
    });
    let output = Arc::new(Mutex::new(None));
    // Through braid's front door, so the task is whatever kind of task braid's tasks are.
    drop(crate::task::spawn(Abortable {
        control: control.clone(),
        output: output.clone(),
        future: Some(Box::pin(future)),
    }));
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
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        match future.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(value) => {
                this.future = None;
                *lock(&this.output) = Some(value);
                this.control.end(FINISHED);
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
        if !this.polled {
            this.polled = true;
            this.control.state.read_point();
        }
        let control = &this.control;
        let state = control.state.with_mut(|s| {
            if *s == FINISHED {
                *s = JOINED;
                return FINISHED;
            }
            *s
        });
        match state {
            FINISHED => {
                let value = lock(&this.output).take().expect("a finished task's output");
                Poll::Ready(Ok(value))
            }
            CANCELLED => Poll::Ready(Err(JoinError { cancelled: true })),
            JOINED => Poll::Ready(Err(JoinError { cancelled: false })),
            _ => {
                *lock(&control.join_waker) = Some(cx.waker().clone());
                Poll::Pending
            }
        }
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

/// A task that ended without an output for its join: it was aborted (`is_cancelled`), or its
/// output was already taken. (A task that panics ends the run as the failure braid was
/// looking for, so `is_panic` is never true here.)
pub struct JoinError {
    cancelled: bool,
}

impl JoinError {
    /// Whether the task was aborted.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// Whether the task panicked: never, under braid (a panic ends the run as a failure).
    pub fn is_panic(&self) -> bool {
        false
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cancelled {
            true => f.write_str("JoinError::Cancelled"),
            false => f.write_str("JoinError::AlreadyJoined"),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cancelled {
            true => f.write_str("task was cancelled"),
            false => f.write_str("task's output was already taken"),
        }
    }
}

impl std::error::Error for JoinError {}
