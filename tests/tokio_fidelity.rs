//! Programs that tokio's multi-thread runtime breaks and that braid used to prove correct, one
//! per cause of a missing interleaving in the facade (issue 27): each must now fail under
//! exhaustive DFS and under the default plan, and its replay file must reproduce the failure.
//!
//! Each program's comment says how tokio breaks it. Before the fix, DFS explored every
//! schedule of each and reported "holds": the operation named had no scheduling point, so the
//! interleaving that breaks it did not exist for braid.

use std::cell::RefCell;
use std::future::Future;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use braid::std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use braid::tokio::{self, sync::mpsc, sync::oneshot, sync::Mutex, sync::Notify};
use braid::{Outcome, Strategy};

/// Where the failures' replay files go.
fn out_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("tokio_fidelity")
        .join(name)
}

/// Checks that exhaustive DFS and the default plan both find `body` failing with
/// `invariant`, and that DFS's replay file reproduces it.
fn found<F, Fut>(name: &str, invariant: &str, body: F)
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let dfs = braid::check(body.clone())
        .name(name)
        .strategy(Strategy::dfs(None))
        .out(out_dir(name))
        .run();
    let failure = match &dfs.outcome {
        Outcome::Failed(f) => f,
        other => panic!("{name}: DFS did not find it: {other:?}"),
    };
    assert_eq!(failure.invariant, invariant, "{name}: {}", failure.message);
    let file = failure.file.clone().expect("a replay file");
    assert!(file.exists(), "{name}: {} was not written", file.display());

    let replayed = braid::check(body.clone()).name(name).replay(&file).run();
    match &replayed.outcome {
        Outcome::Failed(f) => assert_eq!(f.invariant, invariant, "{name}: replay"),
        other => panic!("{name}: the replay file did not reproduce it: {other:?}"),
    }

    let default = braid::check(body)
        .name(name)
        .runs(20_000)
        .out(out_dir(name).join("default"))
        .run();
    match &default.outcome {
        Outcome::Failed(f) => assert_eq!(f.invariant, invariant, "{name}: default plan"),
        other => panic!("{name}: the default plan did not find it: {other:?}"),
    }
}

/// The classic lost wakeup: check a flag, then `notified()`. tokio: the setter runs between
/// the check and `notified()`; `notify_waiters` stores nothing, so the waiter waits forever.
/// Cause: creating a `Notified` read the `notify_waiters` count without a scheduling point.
#[test]
fn notified_after_a_flag_check_loses_the_wakeup() {
    found("notified", "deadlock", || async {
        let notify = Arc::new(Notify::new());
        let ready = Arc::new(AtomicBool::new(false));
        let (n, r) = (notify.clone(), ready.clone());
        let waiter = tokio::spawn(async move {
            if !r.load(SeqCst) {
                n.notified().await;
            }
        });
        ready.store(true, SeqCst);
        notify.notify_waiters();
        waiter.await.unwrap();
    });
}

/// tokio: another task may find the mutex held between `lock()` and the guard's drop, even
/// with nothing in between. Cause: dropping a `MutexGuard` was no scheduling point, so the
/// lock and the unlock were one step.
#[test]
fn a_mutex_guard_drop_is_an_operation() {
    found("guard-drop", "panic", || async {
        let mutex = Arc::new(Mutex::new(0));
        let m = mutex.clone();
        let holder = tokio::spawn(async move {
            let guard = m.lock().await;
            drop(guard);
        });
        assert!(mutex.try_lock().is_ok(), "found the mutex held");
        holder.await.unwrap();
    });
}

/// tokio: a task that saw the flag may still find the oneshot empty (the sender sets the flag,
/// then sends). Cause: oneshot operations had no scheduling point of their own.
#[test]
fn oneshot_send_is_an_operation() {
    found("oneshot", "panic", || async {
        let sent = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = oneshot::channel::<u32>();
        let s = sent.clone();
        let sender = tokio::spawn(async move {
            s.store(true, SeqCst);
            let _ = tx.send(1);
        });
        if sent.load(SeqCst) {
            assert!(rx.try_recv().is_ok(), "flag set, value not there yet");
        }
        sender.await.unwrap();
    });
}

/// tokio: the flag a task sets as its last act can be seen before the task is finished.
/// Cause: a task's completion shared a step with its last operation.
#[test]
fn a_task_end_is_a_step_of_its_own() {
    found("task-end", "panic", || async {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let task = tokio::spawn(async move { d.store(true, SeqCst) });
        if done.load(SeqCst) {
            assert!(task.is_finished(), "flag set, task not finished yet");
        }
        task.await.unwrap();
    });
}

/// tokio: a bounded `send` takes its slot, then queues the message; in between, the slot is
/// gone but nothing can be received. Cause: the two were one step.
#[test]
fn a_bounded_send_takes_its_slot_then_queues() {
    found("bounded-send", "panic", || async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let probe = tx.clone();
        let sender = tokio::spawn(async move { tx.send(1).await.unwrap() });
        if probe.capacity() == 0 {
            assert!(rx.try_recv().is_ok(), "slot taken, message not queued yet");
        }
        sender.await.unwrap();
    });
}

/// tokio: `Permit::send` after the flag is set may not have happened when the flag is seen.
/// Cause: `Permit::send` had no scheduling point.
#[test]
fn permit_send_is_an_operation() {
    found("permit-send", "panic", || async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let sent = Arc::new(AtomicBool::new(false));
        let s = sent.clone();
        let sender = tokio::spawn(async move {
            let permit = tx.reserve().await.unwrap();
            s.store(true, SeqCst);
            permit.send(1);
        });
        if sent.load(SeqCst) {
            assert!(rx.try_recv().is_ok(), "flag set, message not sent yet");
        }
        sender.await.unwrap();
    });
}

/// tokio: dropping the last sender after setting a flag: the receiver may see the flag while
/// the channel is still open. Cause: dropping an `mpsc::Sender` had no scheduling point.
#[test]
fn dropping_the_last_sender_is_an_operation() {
    found("sender-drop", "panic", || async {
        let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
        let gone = Arc::new(AtomicBool::new(false));
        let g = gone.clone();
        let sender = tokio::spawn(async move {
            g.store(true, SeqCst);
            drop(tx);
        });
        if gone.load(SeqCst) {
            assert!(
                matches!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected)),
                "flag set, channel still open"
            );
        }
        sender.await.unwrap();
    });
}

/// tokio draws a new random start at every poll of a `select!`, so the branch polled first
/// can differ from one poll to the next. Cause: braid picked the start once, at the first poll.
#[test]
fn select_picks_its_start_at_every_poll() {
    found("select-restart", "panic", || async {
        let log = Rc::new(RefCell::new(Vec::new()));
        // Each branch is pending at its first poll (waking its task) and ready at its second.
        let branch = |name: char| {
            let log = log.clone();
            let mut polls = 0;
            std::future::poll_fn(move |cx| {
                log.borrow_mut().push(name);
                polls += 1;
                if polls == 2 {
                    return Poll::Ready(name);
                }
                cx.waker().wake_by_ref();
                Poll::Pending
            })
        };
        let (a, b) = (branch('a'), branch('b'));
        tokio::select! {
            _ = a => {}
            _ = b => {}
        }
        let log = log.borrow();
        assert_eq!(log[2], log[0], "the second poll started elsewhere: {log:?}");
    });
}

/// tokio may poll a task that yields again at once, before a task it just spawned has run.
/// Cause: `yield_now` was fair, so the yielder never went on before the others had moved.
#[test]
fn yield_now_may_go_on_at_once() {
    found("yield-now", "panic", || async {
        let ran = Rc::new(std::cell::Cell::new(false));
        let r = ran.clone();
        let task = tokio::spawn(async move { r.set(true) });
        tokio::task::yield_now().await;
        assert!(ran.get(), "the spawned task had not run yet");
        task.await.unwrap();
    });
}

/// On a real clock a task woken at 5 ms can still be slower than a 10 ms timeout. Cause:
/// timers fired only when no task could run (tokio's paused clock), so the woken task always
/// finished first. The clock may now jump to a pending deadline while a task can still run,
/// once per run by default.
#[test]
fn a_slow_task_can_lose_to_its_timeout() {
    found("clock-jump", "panic", || async {
        let (tx, rx) = oneshot::channel::<u32>();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            let _ = tx.send(1);
        });
        let reply = tokio::time::timeout(std::time::Duration::from_millis(10), rx).await;
        assert!(reply.is_ok(), "the reply lost to its timeout");
    });
    // On tokio's paused clock it holds.
    let report = braid::check(|| async {
        let (tx, rx) = oneshot::channel::<u32>();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            let _ = tx.send(1);
        });
        let reply = tokio::time::timeout(std::time::Duration::from_millis(10), rx).await;
        assert!(reply.is_ok(), "the reply lost to its timeout");
    })
    .clock_jumps(0)
    .strategy(Strategy::dfs(None))
    .run();
    assert!(
        matches!(
            report.outcome,
            Outcome::Holds {
                exhaustive: true,
                ..
            }
        ),
        "{:?}",
        report.outcome
    );
}
