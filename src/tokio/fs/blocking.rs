//! How each fs call runs: as tokio runs it, on a blocking task of its own that the caller
//! awaits (tokio's `asyncify`, `spawn_blocking`). The call's effect on the disk is that task's
//! one step, so other tasks may run between the call and its effect and between the effect and
//! the caller's return; and a caller aborted while it waits leaves the effect to happen anyway
//! (facade-diff finding 2: an abort lands inside an fs call). A crash of the host ends the task
//! with the host's others, its effect made or not.
//!
//! The task hands its result over through a slot and the caller's waker rather than a
//! `JoinHandle`: the caller's wait is then no scheduling point of its own (it returns `Pending`,
//! where an abort drops it, as tokio's), and the task's end no step of its own, so a call costs
//! three steps (the task's start, its effect, the caller's wake-up) where a join would cost five.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use crate::tokio::lock;
use crate::world::disk::{Disk, Fs};

/// A blocking task's result, as its caller awaits it.
pub(super) struct Pending<R> {
    slot: Arc<Mutex<Slot<R>>>,
}

struct Slot<R> {
    result: Option<R>,
    /// The task ended without a result (its host crashed under it).
    gone: bool,
    waiter: Option<Waker>,
}

impl<R> Slot<R> {
    fn finish(&mut self, result: Option<R>) {
        self.result = result;
        self.gone = true;
        if let Some(w) = self.waiter.take() {
            w.wake();
        }
    }
}

/// Ends the slot without a result if the task is dropped before it gave one.
struct Hand<R>(Arc<Mutex<Slot<R>>>);

impl<R> Drop for Hand<R> {
    fn drop(&mut self) {
        let mut slot = lock(&self.0);
        if !slot.gone {
            slot.finish(None);
        }
    }
}

impl<R> Future for Pending<R> {
    /// `None` when the task ended without a result.
    type Output = Option<R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R>> {
        let mut slot = lock(&self.slot);
        if slot.gone {
            return Poll::Ready(slot.result.take());
        }
        slot.waiter = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Starts `f` on `disk` as a blocking task named `fs`, its step (a change to the disk)
/// labelled `op`.
pub(super) fn start<R: 'static>(
    disk: &Arc<Disk>,
    op: &'static str,
    f: impl FnOnce(&mut Fs) -> R + 'static,
) -> Pending<R> {
    spawn_on(disk, move |disk| {
        disk.fs.write_point_as(op);
        disk.fs.with_mut(f)
    })
}

/// As `start`, for a call that only looks at the disk: its step is a read, which the
/// reduction may reorder with the disk's other reads.
pub(super) fn start_looking<R: 'static>(
    disk: &Arc<Disk>,
    op: &'static str,
    f: impl FnOnce(&Fs) -> R + 'static,
) -> Pending<R> {
    spawn_on(disk, move |disk| {
        disk.fs.read_point_as(op);
        disk.fs.with(f)
    })
}

/// The blocking task: `step` on `disk`, its result handed to the caller.
fn spawn_on<R: 'static>(disk: &Arc<Disk>, step: impl FnOnce(&Disk) -> R + 'static) -> Pending<R> {
    let disk = Arc::clone(disk);
    let slot = Arc::new(Mutex::new(Slot {
        result: None,
        gone: false,
        waiter: None,
    }));
    let hand = Hand(Arc::clone(&slot));
    crate::task::spawn_named("fs", async move {
        let result = step(&disk);
        lock(&hand.0).finish(Some(result));
    });
    Pending { slot }
}

/// The result of a blocking task `start` began.
pub(super) async fn finish<R>(task: Pending<io::Result<R>>) -> io::Result<R> {
    task.await.unwrap_or_else(|| {
        Err(io::Error::other(
            "the fs call's host crashed before it finished",
        ))
    })
}

/// Runs `f` on the running host's disk as one fs call: started, then awaited.
pub(super) async fn call<R: 'static>(
    op: &'static str,
    f: impl FnOnce(&mut Fs) -> io::Result<R> + 'static,
) -> io::Result<R> {
    call_on(&crate::world::disk::disk(), op, f).await
}

/// As `call`, for a call that only looks at the disk (see `start_looking`).
pub(super) async fn look<R: 'static>(
    op: &'static str,
    f: impl FnOnce(&Fs) -> io::Result<R> + 'static,
) -> io::Result<R> {
    look_on(&crate::world::disk::disk(), op, f).await
}

/// As `look`, on `disk`.
pub(super) async fn look_on<R: 'static>(
    disk: &Arc<Disk>,
    op: &'static str,
    f: impl FnOnce(&Fs) -> io::Result<R> + 'static,
) -> io::Result<R> {
    finish(start_looking(disk, op, f)).await
}

/// As `call`, on `disk`.
pub(super) async fn call_on<R: 'static>(
    disk: &Arc<Disk>,
    op: &'static str,
    f: impl FnOnce(&mut Fs) -> io::Result<R> + 'static,
) -> io::Result<R> {
    finish(start(disk, op, f)).await
}
