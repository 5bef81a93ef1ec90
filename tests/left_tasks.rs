//! The tasks left waiting when a test body returns are dropped as tokio drops them at a
//! runtime's shutdown: each future once, between polls, so its destructors run as in any drop
//! (no unwinding: `std::thread::panicking()` is false in them, and a std mutex guard they hold
//! poisons nothing), and nothing after the await it waits at runs. A task left inside a
//! synchronous operation (a `braid::std` lock) cannot return from its poll and is unwound, as
//! before; and a task whose poll runs on into braid's state after its run is over (a ready
//! future that is not braid's, in the futures crate's `select`) is unwound before it touches
//! it. Each test fails with the old unwinding of every left task, but the one of a
//! synchronous lock, which checks the fallback.

// The tasks hold a std mutex's guard across an await on purpose (see `five_waiters`).
#![allow(clippy::await_holding_lock)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex as StdMutex};

use braid::tokio::{self, sync::mpsc, sync::oneshot, sync::Mutex, sync::Notify, sync::Semaphore};
use braid::{Grain, Outcome, Strategy};

/// Counts itself, its drop, and whether that drop came while unwinding.
struct Guard(&'static Counters);

impl Guard {
    fn new(c: &'static Counters) -> Guard {
        c.made.fetch_add(1, SeqCst);
        Guard(c)
    }
}

#[derive(Default)]
struct Counters {
    made: AtomicUsize,
    drops: AtomicUsize,
    unwinding: AtomicUsize,
    ran_on: AtomicUsize,
    std_locks: StdMutex<Vec<Arc<StdMutex<()>>>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, SeqCst);
        if std::thread::panicking() {
            self.0.unwinding.fetch_add(1, SeqCst);
        }
    }
}

thread_local! {
    /// Set by a body as its last act: code on this thread that sees it runs after the run is
    /// over (runs go on in parallel, one per thread).
    static OVER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn counters() -> &'static Counters {
    Box::leak(Box::default())
}

const RUNS: u64 = 300;

/// Five tasks that wait for good (a semaphore, a channel, a held lock, a oneshot, a join),
/// each holding a guard and a std mutex's guard across its await; a sixth keeps what they wait
/// on; the body yields and returns, dropping nothing that could move them.
fn five_waiters(c: &'static Counters, grain: Grain) -> braid::Check {
    braid::check(move || async move {
        OVER.set(false);
        let std_locks: Vec<_> = (0..5).map(|_| Arc::new(StdMutex::new(()))).collect();
        let sem = Arc::new(Semaphore::new(0));
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let lock = Arc::new(Mutex::new(()));
        let (once_tx, once_rx) = oneshot::channel::<u32>();
        let forever = tokio::spawn(std::future::pending::<()>());
        let held = lock.clone().lock_owned().await;
        tokio::spawn(async move {
            let _kept = (tx, once_tx, held);
            std::future::pending::<()>().await
        });
        let waits: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>> = vec![
            Box::pin(async move { drop(sem.acquire().await) }),
            Box::pin(async move {
                let _ = rx.recv().await;
            }),
            Box::pin(async move { drop(lock.lock().await) }),
            Box::pin(async move { drop(once_rx.await) }),
            Box::pin(async move { drop(forever.await) }),
        ];
        for (wait, std_lock) in waits.into_iter().zip(&std_locks) {
            let std_lock = std_lock.clone();
            tokio::spawn(async move {
                let _guard = Guard::new(c);
                // Held across the await on purpose: a left task's unwinding would poison it.
                let _std = std_lock.lock().unwrap();
                wait.await;
                if OVER.get() {
                    c.ran_on.fetch_add(1, SeqCst);
                }
            });
        }
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        // Looked at once the runs are over: poisoned if a task unwound holding its guard.
        c.std_locks.lock().unwrap().extend(std_locks);
        OVER.set(true);
    })
    .grain(grain)
    .strategy(Strategy::Random)
    .runs(RUNS)
}

/// Runs the five waiters at `grain`: every run holds, every guard made is dropped once, and
/// no code after a left task's await runs. Returns the drops made while unwinding.
fn run_five_waiters(grain: Grain) -> (&'static Counters, usize) {
    let c = counters();
    let report = five_waiters(c, grain).run();
    let outcome = &report.outcome;
    assert!(matches!(outcome, Outcome::Holds { .. }), "{outcome:?}");
    let drops = c.drops.load(SeqCst);
    assert!(drops > 0 && drops == c.made.load(SeqCst), "{drops}");
    let ran_on = c.ran_on.load(SeqCst);
    assert_eq!(ran_on, 0, "code after a left task's await ran");
    (c, c.unwinding.load(SeqCst))
}

#[test]
fn tasks_left_at_an_await_are_dropped_between_polls() {
    let (c, unwinding) = run_five_waiters(Grain::Await);
    assert_eq!(unwinding, 0, "a left task was unwound");
    let locks = c.std_locks.lock().unwrap();
    let poisoned = locks.iter().filter(|l| l.is_poisoned()).count();
    assert_eq!(poisoned, 0, "a std lock was poisoned");
}

#[test]
fn at_access_grain_too() {
    // Each point these tasks wait at is in a poll, at access grain as well.
    let (_, unwinding) = run_five_waiters(Grain::Access);
    assert_eq!(unwinding, 0, "a left task was unwound");
}

/// Explores `check` with `RUNS` random runs: every run holds.
fn holds(check: braid::Check) {
    let report = check.strategy(Strategy::Random).runs(RUNS).run();
    let outcome = &report.outcome;
    assert!(matches!(outcome, Outcome::Holds { .. }), "{outcome:?}");
}

#[test]
fn a_task_left_in_a_synchronous_lock_is_unwound() {
    let c = counters();
    let check = braid::check(move || async move {
        let lock = Arc::new(braid::std::sync::Mutex::new(0u32));
        let held = lock.lock().unwrap();
        let l = lock.clone();
        tokio::spawn(async move {
            let _guard = Guard::new(c);
            *l.lock().unwrap() += 1;
            c.ran_on.fetch_add(1, SeqCst);
        });
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        std::mem::forget(held);
    })
    .grain(Grain::Access);
    holds(check);
    let (drops, unwinding) = (c.drops.load(SeqCst), c.unwinding.load(SeqCst));
    assert!(
        unwinding > 0 && unwinding == drops,
        "{unwinding} of {drops}"
    );
    assert_eq!(c.ran_on.load(SeqCst), 0);
}

#[test]
fn a_poll_that_runs_on_into_braid_state_is_unwound_there() {
    let (before, after) = (counters(), counters());
    let check = braid::check(move || async move {
        OVER.set(false);
        let notify = Arc::new(Notify::new());
        let flag = Arc::new(braid::std::sync::atomic::AtomicUsize::new(0));
        let (n, f) = (notify.clone(), flag.clone());
        tokio::spawn(async move {
            let _guard = Guard::new(before);
            // Not braid's `select!`: the ready branch is polled after the notify's point, and
            // is ready whatever braid says.
            let notified = std::pin::pin!(n.notified());
            futures::future::select(notified, std::future::ready(())).await;
            if OVER.get() {
                before.ran_on.fetch_add(1, SeqCst);
            }
            f.store(1, SeqCst);
            if OVER.get() {
                after.ran_on.fetch_add(1, SeqCst);
            }
        });
        tokio::task::yield_now().await;
        OVER.set(true);
    })
    .grain(Grain::Access);
    holds(check);
    let ran_on = before.ran_on.load(SeqCst);
    assert!(
        ran_on > 0,
        "no run left the task where its poll could run on"
    );
    assert!(before.unwinding.load(SeqCst) >= ran_on, "each was unwound");
    assert_eq!(
        after.ran_on.load(SeqCst),
        0,
        "a store reached braid after the run"
    );
}
