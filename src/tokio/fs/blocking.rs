//! How each fs call runs: as tokio runs it, on a blocking task of its own that the caller
//! awaits (tokio's `asyncify`, `spawn_blocking`). The call's effect on the disk is that task's
//! one step, so other tasks may run between the call and its effect and between the effect and
//! the caller's return; and a caller aborted while it waits leaves the effect to happen anyway
//! (facade-diff finding 2: an abort lands inside an fs call). A crash of the host ends the task
//! with the host's others, its effect made or not.
//!
//! The task hands its result over through a slot and the caller's waker rather than a
//! `JoinHandle`, and its end is no step of its own. The caller's first look at the slot is a
//! step: tokio's blocking pool may finish the call before the caller first polls its handle (a
//! `fs::OpenOptions::open` was ready at its first poll in 1,854 of 20,000 runs on this machine),
//! and the caller then goes on in the same poll, where an abort does not stop it (facade-diff
//! finding 4: program 96001, an aborted task that still opens its file). Waiting, it returns
//! `Pending`, where an abort drops it, as tokio's. A call costs four steps (the task's start,
//! its effect, the caller's look, its wake-up when it had to wait).

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
    /// The disk the task works on: the caller's first look is a step on it (a write, so that it
    /// is ordered against the task's step whether that reads or writes the disk).
    disk: Arc<Disk>,
    looked: bool,
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
        let this = self.get_mut();
        if !this.looked {
            std::task::ready!(this.disk.fs.poll_write_point_at("look for fs result", None));
            this.looked = true;
        }
        let mut slot = lock(&this.slot);
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
    let task_disk = Arc::clone(&disk);
    crate::task::spawn_named("fs", async move {
        let result = step(&task_disk);
        lock(&hand.0).finish(Some(result));
    });
    Pending {
        slot,
        disk,
        looked: false,
    }
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
