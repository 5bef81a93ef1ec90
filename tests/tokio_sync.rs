//! The tokio facade against the behaviour tokio documents: each test passes only if the
//! facade item behaves as tokio says, in every schedule braid explores (and the `check` tests
//! show that exploration finds the bugs facade-based code can have).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use braid::tokio::{
    self,
    sync::{broadcast, mpsc, oneshot, watch, Mutex, Notify, RwLock, Semaphore, TryAcquireError},
    time,
};
use braid::{Outcome, Strategy};

/// Sets its flag when dropped: shows that a future was cancelled.
struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// A future that never completes and flags its drop (polled or not: the guard exists from
/// the start).
fn pending_forever(flag: Rc<Cell<bool>>) -> impl std::future::Future<Output = u32> {
    let guard = DropFlag(flag);
    async move {
        let _guard = guard;
        std::future::pending::<u32>().await
    }
}

fn fails(report: &braid::Report) -> bool {
    matches!(report.outcome, Outcome::Failed(_))
}

// ---- mpsc ----

#[braid::test]
async fn a_full_bounded_channel_refuses_try_send_and_send_waits_for_a_recv() {
    let (tx, mut rx) = mpsc::channel::<u32>(2);
    tx.try_send(1).unwrap();
    tx.try_send(2).unwrap();
    assert_eq!(tx.capacity(), 0);
    assert!(matches!(
        tx.try_send(3),
        Err(mpsc::error::TrySendError::Full(3))
    ));
    let received = Rc::new(Cell::new(false));
    let r = received.clone();
    let sender = tokio::spawn(async move {
        tx.send(3).await.unwrap();
        assert!(r.get(), "send completed while the channel was full");
    });
    // A fair yield: the sender runs first, and blocks on the full channel.
    tokio::task::yield_now().await;
    assert!(!sender.is_finished());
    received.set(true);
    assert_eq!(rx.recv().await, Some(1));
    sender.await.unwrap();
    assert_eq!(rx.recv().await, Some(2));
    assert_eq!(rx.recv().await, Some(3));
    assert_eq!(rx.recv().await, None, "every sender is gone");
}

#[braid::test]
async fn reserve_holds_a_slot_and_a_dropped_permit_gives_it_back() {
    let (tx, mut rx) = mpsc::channel::<u32>(1);
    let permit = tx.reserve().await.unwrap();
    assert!(matches!(
        tx.try_send(1),
        Err(mpsc::error::TrySendError::Full(1))
    ));
    drop(permit);
    let permit = tx.try_reserve().unwrap();
    permit.send(7);
    assert_eq!(rx.recv().await, Some(7));
    assert_eq!(tx.capacity(), 1);
}

#[braid::test]
async fn senders_waiting_on_a_full_channel_are_served_in_order() {
    let (tx, mut rx) = mpsc::channel::<u32>(1);
    tx.send(0).await.unwrap();
    let mut senders = Vec::new();
    for i in 1..=3 {
        let tx = tx.clone();
        senders.push(tokio::spawn(async move { tx.send(i).await.unwrap() }));
        settle().await; // each blocks before the next starts
    }
    drop(tx);
    for i in 0..=3 {
        assert_eq!(rx.recv().await, Some(i));
    }
    assert_eq!(rx.recv().await, None);
}

#[braid::test]
async fn closing_the_receiver_fails_sends_and_drains_what_is_queued() {
    let (tx, mut rx) = mpsc::channel::<u32>(4);
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Empty));
    tx.send(1).await.unwrap();
    rx.close();
    assert!(tx.is_closed());
    assert_eq!(tx.send(2).await, Err(mpsc::error::SendError(2)));
    assert!(matches!(
        tx.try_send(3),
        Err(mpsc::error::TrySendError::Closed(3))
    ));
    assert_eq!(rx.try_recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));
    // A sender waiting for room fails when the receiver goes away.
    let (tx, rx) = mpsc::channel::<u32>(1);
    tx.send(1).await.unwrap();
    let blocked = tokio::spawn(async move { tx.send(2).await });
    tokio::task::yield_now().await;
    drop(rx);
    assert!(blocked.await.unwrap().is_err());
}

#[braid::test]
async fn sender_closed_completes_when_the_receiver_goes() {
    let (tx, rx) = mpsc::channel::<u32>(1);
    let watcher = tokio::spawn(async move {
        tx.closed().await;
        assert!(tx.is_closed());
    });
    drop(rx);
    watcher.await.unwrap();
}

#[braid::test]
async fn unbounded_send_never_waits_and_each_sender_keeps_its_order() {
    let (tx, mut rx) = mpsc::unbounded_channel::<(u32, u32)>();
    for who in 0..2 {
        let tx = tx.clone();
        tokio::spawn(async move {
            for i in 0..3 {
                tx.send((who, i)).unwrap();
                tokio::task::yield_now().await;
            }
        });
    }
    drop(tx);
    let mut next = [0, 0];
    while let Some((who, i)) = rx.recv().await {
        assert_eq!(
            i, next[who as usize],
            "sender {who}'s messages out of order"
        );
        next[who as usize] += 1;
    }
    assert_eq!(next, [3, 3]);
    let (tx, rx) = mpsc::unbounded_channel::<u32>();
    drop(rx);
    assert_eq!(tx.send(1), Err(mpsc::error::SendError(1)));
}

#[test]
fn exploration_finds_a_check_then_act_over_the_queue_length() {
    // Two consumers share a receiver; each checks that a message is queued, does something
    // else (an await), then takes it with `try_recv().unwrap()`: the other consumer can take
    // it in between.
    let report = braid::check(|| async {
        let (tx, rx) = mpsc::channel::<u32>(4);
        let rx = Rc::new(Mutex::new(rx));
        tx.send(1).await.unwrap();
        let mut consumers = Vec::new();
        for _ in 0..2 {
            let rx = rx.clone();
            consumers.push(tokio::spawn(async move {
                if !rx.lock().await.is_empty() {
                    tokio::task::yield_now().await;
                    rx.lock().await.try_recv().unwrap();
                }
            }));
        }
        for c in consumers {
            c.await.unwrap();
        }
    })
    .strategy(Strategy::dfs(None))
    .run();
    let failure = report.failure().expect("the race is found");
    assert!(failure.message.contains("Empty"), "{}", failure.message);
}

// ---- Notify ----

#[braid::test]
async fn notify_one_before_notified_stores_a_permit() {
    let notify = Notify::new();
    notify.notify_one();
    notify.notify_one(); // at most one permit
    notify.notified().await; // completes at once: the permit is consumed
    let n = Rc::new(notify);
    let waiter = {
        let n = n.clone();
        tokio::spawn(async move { n.notified().await })
    };
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished(), "only one permit was stored");
    n.notify_one();
    waiter.await.unwrap();
}

#[test]
fn notify_waiters_stores_no_permit() {
    let report = braid::check(|| async {
        let notify = Notify::new();
        notify.notify_waiters();
        notify.notified().await; // nobody will ever notify: a deadlock
    })
    .run();
    let failure = report.failure().expect("the wait never ends");
    assert!(
        failure.message.contains("no task can run"),
        "{}",
        failure.message
    );
}

#[braid::test]
async fn notify_waiters_wakes_every_waiter_and_a_notified_created_before_it() {
    let notify = Rc::new(Notify::new());
    let (ready, mut all_ready) = tokio::sync::mpsc::unbounded_channel();
    let mut waiters = Vec::new();
    for _ in 0..2 {
        let n = notify.clone();
        let ready = ready.clone();
        waiters.push(tokio::spawn(async move {
            // Created before `notify_waiters` (the waiter says so only afterwards): woken,
            // whether or not it is polled before the call. (One `yield_now` would not do: on a
            // multi-thread runtime the waiters may not have reached `notified()` yet.)
            let notified = n.notified();
            ready.send(()).unwrap();
            notified.await
        }));
    }
    for _ in 0..2 {
        all_ready.recv().await.unwrap();
    }
    // Created before the call, never polled yet: still woken, as tokio specifies.
    let early = notify.notified();
    notify.notify_waiters();
    early.await;
    for w in waiters {
        w.await.unwrap();
    }
}

#[test]
fn exploration_finds_a_lost_wakeup_with_notify_waiters() {
    // The waiter and the notifier both wake at 1 ms; if the notifier goes first, its
    // `notify_waiters` finds nobody waiting, stores nothing, and the waiter waits forever.
    let report = braid::check(|| async {
        let notify = Rc::new(Notify::new());
        let n = notify.clone();
        let waiter = tokio::spawn(async move {
            time::sleep(Duration::from_millis(1)).await;
            n.notified().await;
        });
        time::sleep(Duration::from_millis(1)).await;
        notify.notify_waiters();
        waiter.await.unwrap();
    })
    .strategy(Strategy::dfs(None))
    .run();
    assert!(fails(&report), "{:?}", report.outcome);
    // With `notify_one`, whose permit is stored, the same program holds.
    let report = braid::check(|| async {
        let notify = Rc::new(Notify::new());
        let n = notify.clone();
        let waiter = tokio::spawn(async move {
            time::sleep(Duration::from_millis(1)).await;
            n.notified().await;
        });
        time::sleep(Duration::from_millis(1)).await;
        notify.notify_one();
        waiter.await.unwrap();
    })
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

// ---- watch ----

#[braid::test]
async fn watch_keeps_only_the_latest_value() {
    let (tx, mut rx) = watch::channel(0);
    assert_eq!(rx.has_changed(), Ok(false));
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    assert_eq!(rx.has_changed(), Ok(true));
    assert_eq!(*rx.borrow(), 2);
    assert_eq!(rx.has_changed(), Ok(true), "borrow does not mark it seen");
    rx.changed().await.unwrap(); // one change, however many sends
    assert_eq!(*rx.borrow_and_update(), 2);
    assert_eq!(rx.has_changed(), Ok(false));
    drop(tx);
    assert!(rx.changed().await.is_err(), "the sender is gone");
    assert!(rx.has_changed().is_err());
}

#[braid::test]
async fn a_watcher_sees_the_final_value_whatever_it_skips() {
    let (tx, mut rx) = watch::channel(0u32);
    let watcher = tokio::spawn(async move {
        let mut seen = vec![*rx.borrow_and_update()];
        while rx.changed().await.is_ok() {
            seen.push(*rx.borrow_and_update());
        }
        seen
    });
    for v in 1..=3 {
        tx.send_replace(v);
        tokio::task::yield_now().await;
    }
    drop(tx);
    let seen = watcher.await.unwrap();
    assert_eq!(seen.last(), Some(&3));
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
}

#[braid::test]
async fn watch_send_fails_without_receivers_and_subscribe_starts_seen() {
    let (tx, rx) = watch::channel("a");
    let mut late = tx.subscribe();
    assert_eq!(tx.receiver_count(), 2);
    assert_eq!(late.has_changed(), Ok(false));
    drop(rx);
    tx.send("b").unwrap();
    assert!(late.borrow_and_update().has_changed());
    drop(late);
    assert!(tx.is_closed());
    assert_eq!(tx.send("c"), Err(watch::error::SendError("c")));
    assert_eq!(*tx.borrow(), "b", "a failed send keeps the old value");
}

// ---- broadcast ----

#[braid::test]
async fn a_lagging_broadcast_receiver_is_told_by_how_much() {
    let (tx, mut rx) = broadcast::channel(2);
    for v in [10, 20, 30] {
        assert_eq!(tx.send(v), Ok(1));
    }
    assert_eq!(rx.recv().await, Err(broadcast::error::RecvError::Lagged(1)));
    assert_eq!(rx.recv().await, Ok(20), "resumes at the oldest value held");
    assert_eq!(rx.recv().await, Ok(30));
    assert_eq!(rx.try_recv(), Err(broadcast::error::TryRecvError::Empty));
    // Capacity 3 is rounded up to 4, as tokio does: 5 sends lose one.
    let (tx, mut rx) = broadcast::channel(3);
    for v in 0..5 {
        tx.send(v).unwrap();
    }
    assert_eq!(
        rx.try_recv(),
        Err(broadcast::error::TryRecvError::Lagged(1))
    );
    assert_eq!(rx.try_recv(), Ok(1));
}

#[braid::test]
async fn every_broadcast_receiver_gets_every_value_then_closed() {
    let (tx, rx) = broadcast::channel::<u32>(8);
    let mut receivers = vec![rx, tx.subscribe()];
    let tasks: Vec<_> = receivers
        .drain(..)
        .map(|mut rx| {
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    match rx.recv().await {
                        Ok(v) => got.push(v),
                        Err(broadcast::error::RecvError::Closed) => return got,
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    for v in 0..3 {
        assert_eq!(tx.send(v), Ok(2));
        tokio::task::yield_now().await;
    }
    let late = tx.subscribe();
    drop(tx);
    for t in tasks {
        assert_eq!(t.await.unwrap(), vec![0, 1, 2]);
    }
    drop(late);
    let (tx, rx) = broadcast::channel::<u32>(1);
    drop(rx);
    assert!(tx.send(1).is_err(), "no receiver");
}

// ---- Semaphore ----

#[braid::test]
async fn a_semaphore_waiter_asking_for_more_holds_back_those_behind_it() {
    let sem = Arc::new(Semaphore::new(1));
    let order = Rc::new(RefCell::new(Vec::new()));
    let held = sem.acquire().await.unwrap();
    let big = {
        let (sem, order) = (sem.clone(), order.clone());
        tokio::spawn(async move {
            let _p = sem.acquire_many(2).await.unwrap();
            order.borrow_mut().push("big");
        })
    };
    settle().await; // `big` queues first
    let small = {
        let (sem, order) = (sem.clone(), order.clone());
        tokio::spawn(async move {
            let _p = sem.acquire().await.unwrap();
            order.borrow_mut().push("small");
        })
    };
    settle().await; // then `small`
    drop(held);
    // The freed permit went to `big` (it still needs one more), not to `small`.
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
    tokio::task::yield_now().await;
    assert!(order.borrow().is_empty());
    sem.add_permits(1);
    big.await.unwrap();
    small.await.unwrap();
    assert_eq!(*order.borrow(), ["big", "small"]);
    assert_eq!(sem.available_permits(), 2);
}

#[braid::test]
async fn semaphore_permits_forget_close_and_owned() {
    let sem = Arc::new(Semaphore::new(3));
    sem.acquire().await.unwrap().forget();
    assert_eq!(sem.available_permits(), 2);
    let owned = sem.clone().acquire_many_owned(2).await.unwrap();
    assert_eq!(owned.num_permits(), 2);
    let waiter = {
        let sem = sem.clone();
        tokio::spawn(async move { sem.acquire().await.is_err() })
    };
    tokio::task::yield_now().await;
    sem.close();
    assert!(
        waiter.await.unwrap(),
        "a waiter fails when the semaphore closes"
    );
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
    drop(owned);
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn exploration_finds_a_check_then_act_over_available_permits() {
    let report = braid::check(|| async {
        let sem = Rc::new(Semaphore::new(1));
        let mut tasks = Vec::new();
        for _ in 0..2 {
            let sem = sem.clone();
            tasks.push(tokio::spawn(async move {
                if sem.available_permits() > 0 {
                    tokio::task::yield_now().await;
                    sem.try_acquire().expect("checked it was free").forget();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    })
    .strategy(Strategy::dfs(None))
    .run();
    let failure = report.failure().expect("both tasks see the permit free");
    assert!(
        failure.message.contains("checked it was free"),
        "{}",
        failure.message
    );
}

// ---- Mutex and RwLock ----

#[braid::test]
async fn mutex_try_lock_fails_while_held_and_a_cancelled_lock_leaves_the_queue() {
    let m = Rc::new(Mutex::new(0));
    let guard = m.lock().await;
    assert!(m.try_lock().is_err());
    // A `lock()` that times out while queued is dropped, and holds nothing.
    assert!(time::timeout(Duration::from_millis(1), m.lock())
        .await
        .is_err());
    let other = {
        let m = m.clone();
        tokio::spawn(async move { *m.lock().await += 1 })
    };
    drop(guard);
    other.await.unwrap();
    assert_eq!(*m.try_lock().unwrap(), 1);
}

#[test]
fn exploration_finds_a_lost_update_across_two_locks() {
    let report = braid::check(|| async {
        let m = Rc::new(Mutex::new(0));
        let mut tasks = Vec::new();
        for _ in 0..2 {
            let m = m.clone();
            tasks.push(tokio::spawn(async move {
                let v = *m.lock().await;
                tokio::task::yield_now().await;
                *m.lock().await = v + 1;
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*m.lock().await, 2, "an update was lost");
    })
    .strategy(Strategy::dfs(None))
    .run();
    assert!(fails(&report), "{:?}", report.outcome);
}

#[braid::test]
async fn a_waiting_writer_blocks_new_readers() {
    let lock = Rc::new(RwLock::new(0));
    let r1 = lock.read().await;
    let r2 = lock.try_read().expect("readers share the lock");
    assert!(lock.try_write().is_err());
    let writer = {
        let lock = lock.clone();
        tokio::spawn(async move { *lock.write().await = 1 })
    };
    settle().await; // the writer queues
    assert!(
        lock.try_read().is_err(),
        "a waiting writer holds back new readers"
    );
    drop((r1, r2));
    writer.await.unwrap();
    assert_eq!(*lock.read().await, 1);
}

// ---- select! ----

#[braid::test]
async fn select_drops_the_losing_branch_before_the_handler_runs() {
    let dropped = Rc::new(Cell::new(false));
    let won = tokio::select! {
        v = pending_forever(dropped.clone()) => v,
        v = async { 5 } => {
            assert!(dropped.get(), "the loser was not dropped before the handler");
            v
        }
    };
    assert_eq!(won, 5);
}

#[braid::test]
async fn biased_select_polls_in_the_order_written() {
    let got = tokio::select! {
        biased;
        v = async { 1 } => v,
        v = async { 2 } => v,
    };
    assert_eq!(got, 1);
}

#[test]
fn unbiased_select_explores_both_orders() {
    let report = braid::check(|| async {
        let got = tokio::select! {
            v = async { 1 } => v,
            v = async { 2 } => v,
        };
        assert_eq!(got, 1, "the second branch won");
    })
    .strategy(Strategy::dfs(None))
    .run();
    let failure = report.failure().expect("the other order is explored");
    assert!(failure.message.contains("the second branch won"));
    // And the winner depends on nothing else: both orders, two runs.
    let report = braid::check(|| async {
        let got = tokio::select! {
            v = async { 1 } => v,
            v = async { 2 } => v,
        };
        assert!(got == 1 || got == 2);
    })
    .strategy(Strategy::dfs(None))
    .run();
    assert!(
        matches!(
            report.outcome,
            Outcome::Holds {
                exhaustive: true,
                runs: 2,
                ..
            }
        ),
        "{:?}",
        report.outcome
    );
}

#[braid::test]
async fn select_disables_mismatched_and_preconditioned_branches() {
    let got = tokio::select! {
        Some(v) = async { None::<u32> } => v,
        v = async { 9 }, if false => v,
        mut v = async { 3 } => { v += 1; v }
    };
    assert_eq!(got, 4);
    let got = tokio::select! {
        Some(v) = async { None::<u32> } => v,
        else => 0,
    };
    assert_eq!(got, 0);
    // In a loop, handlers may `break`: until every sender is gone.
    let (tx, mut rx) = mpsc::unbounded_channel();
    for i in 1..=3 {
        tx.send(i).unwrap();
    }
    drop(tx);
    let mut sum = 0;
    loop {
        tokio::select! {
            Some(v) = rx.recv() => sum += v,
            else => break,
        }
    }
    assert_eq!(sum, 6);
}

// On tokio's paused clock: the reply at 5 ms always beats the 50 ms sleep. (With a clock
// jump the sleep may fire while the replier is slow: see tests/tokio_fidelity.rs.)
#[braid::test(clock_jumps = 0)]
async fn select_with_a_timer_and_a_channel() {
    let (tx, rx) = oneshot::channel::<u32>();
    tokio::spawn(async move {
        time::sleep(Duration::from_millis(5)).await;
        let _ = tx.send(1);
    });
    let got = tokio::select! {
        v = rx => v.ok(),
        _ = time::sleep(Duration::from_millis(50)) => None,
    };
    assert_eq!(got, Some(1));
}

// ---- JoinHandle ----

#[braid::test]
async fn abort_drops_the_task_and_its_join_is_cancelled() {
    let dropped = Rc::new(Cell::new(false));
    let task = tokio::spawn(pending_forever(dropped.clone()));
    tokio::task::yield_now().await; // it starts, and waits
    assert!(!task.is_finished());
    task.abort();
    let err = task.await.unwrap_err();
    assert!(err.is_cancelled());
    assert!(dropped.get(), "the aborted task's future was dropped");
}

#[braid::test]
async fn abort_before_the_first_poll_and_after_the_end() {
    let started = Rc::new(Cell::new(false));
    let s = started.clone();
    let task = tokio::spawn(async move { s.set(true) });
    // The task may run before `abort` (another worker would pick it up in tokio too): then
    // the abort comes too late and the join has its output.
    task.abort();
    match task.await {
        Err(e) => {
            assert!(e.is_cancelled());
            assert!(!started.get(), "aborted before it ran");
        }
        Ok(()) => assert!(started.get()),
    }
    let task = tokio::spawn(async { 7 });
    // Its end is a step of its own: one yield does not make it finished (nor does it on a
    // multi-thread runtime), so wait for it.
    while !task.is_finished() {
        tokio::task::yield_now().await;
    }
    task.abort(); // no effect: it has finished
    assert_eq!(task.await.unwrap(), 7);
}

#[braid::test]
async fn an_aborted_task_parked_at_a_scheduling_point_is_dropped_there() {
    let steps = Rc::new(Cell::new(0));
    let s = steps.clone();
    let task = tokio::spawn(async move {
        loop {
            s.set(s.get() + 1);
            tokio::task::yield_now().await;
        }
    });
    tokio::task::yield_now().await;
    task.abort();
    let at_abort = steps.get();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(steps.get(), at_abort, "it took no step after the abort");
}

#[braid::test]
async fn a_join_handle_can_lose_a_timeout_and_be_awaited_again() {
    let (tx, rx) = oneshot::channel::<()>();
    let mut task = tokio::spawn(async move {
        let _ = rx.await;
        1
    });
    assert!(time::timeout(Duration::from_millis(1), &mut task)
        .await
        .is_err());
    tx.send(()).unwrap();
    assert_eq!(task.await.unwrap(), 1);
}

/// Lets every other task run until it waits: each fair yield gives every task that can run a
/// step, and no task here needs more than a few to reach its wait (at access grain every
/// facade operation is a scheduling point, so one yield is not enough).
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}
