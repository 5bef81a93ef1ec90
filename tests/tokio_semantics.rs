//! The facade's behaviour where it used to part from tokio's documented behaviour: a task's
//! panic reaches its joiner, the tasks left when the test body returns are dropped, a waker
//! whose drop reaches the same channel is no abort, other crates' combinators drive braid's
//! futures, and a `biased;` `select!` takes a ready first branch.

use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Wake, Waker};

use braid::tokio::{self, sync::mpsc, sync::Mutex};
use braid::{Outcome, Strategy};
use futures::stream::{FuturesUnordered, StreamExt};

#[braid::test]
async fn a_task_panic_reaches_its_joiner_as_a_join_error() {
    let task = tokio::spawn(async {
        tokio::task::yield_now().await;
        panic!("boom");
    });
    let err = task.await.unwrap_err();
    assert!(err.is_panic() && !err.is_cancelled(), "{err:?}");
    assert!(err.to_string().contains("boom"), "{err}");
    let payload = err.into_panic();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
}

#[test]
fn a_panic_nobody_observes_fails_the_run_at_its_end() {
    let report = braid::check(|| async {
        let task = tokio::spawn(async { panic!("unseen") });
        while !task.is_finished() {
            tokio::task::yield_now().await;
        }
        drop(task); // never joined
    })
    .strategy(Strategy::dfs(None))
    .run();
    let Outcome::Failed(failure) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(failure.invariant, "panic");
    assert!(
        failure.message.contains("nobody observed") && failure.message.contains("unseen"),
        "{}",
        failure.message
    );
}

#[test]
fn the_tasks_left_when_the_body_returns_are_dropped() {
    // An endless background loop and a task waiting forever: tokio drops both when the test
    // body returns. Neither is a livelock nor a deadlock, and their destructors run.
    let report = braid::check(|| async {
        tokio::spawn(async {
            loop {
                tokio::task::yield_now().await;
            }
        });
        let (_tx, mut rx) = mpsc::channel::<u32>(1);
        tokio::spawn(async move { rx.recv().await });
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

#[test]
fn a_long_straight_line_task_is_no_livelock() {
    // 10,000 sends and receives without ever waiting: far past the default step bound, yet no
    // cycle of yields, so the run goes on and ends.
    let report = braid::check(|| async {
        let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
        let worker = tokio::spawn(async move {
            let mut sum = 0u64;
            for i in 0..10_000 {
                tx.send(i).unwrap();
                sum += u64::from(rx.recv().await.unwrap());
            }
            sum
        });
        assert_eq!(worker.await.unwrap(), 49_995_000);
    })
    .runs(3)
    .run();
    assert!(
        matches!(report.outcome, Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
}

/// A waker holding a sender of the channel it waits on: its drop reaches the channel's state.
struct HoldsSender(#[allow(dead_code)] StdMutex<Option<mpsc::UnboundedSender<u32>>>);

impl Wake for HoldsSender {
    fn wake(self: Arc<Self>) {}
}

#[braid::test]
async fn a_waker_whose_drop_reaches_the_same_channel_is_no_abort() {
    let (tx, mut rx) = mpsc::unbounded_channel::<u32>();
    let first = Waker::from(Arc::new(HoldsSender(StdMutex::new(Some(tx.clone())))));
    let second = Waker::from(Arc::new(HoldsSender(StdMutex::new(None))));
    {
        let mut recv = std::pin::pin!(rx.recv());
        assert!(recv
            .as_mut()
            .poll(&mut Context::from_waker(&first))
            .is_pending());
        drop(first); // the channel holds the only clone now
                     // Re-polled with another waker: the first is dropped, dropping its sender.
        assert!(recv
            .as_mut()
            .poll(&mut Context::from_waker(&second))
            .is_pending());
    }
    tx.send(7).unwrap();
    assert_eq!(rx.recv().await, Some(7));
}

#[braid::test]
async fn other_crates_combinators_drive_braids_futures() {
    let counter = Arc::new(Mutex::new(0));
    let mut tasks = FuturesUnordered::new();
    for i in 0..3 {
        let counter = counter.clone();
        tasks.push(async move {
            let mut guard = counter.lock().await;
            tokio::task::yield_now().await;
            *guard += 1;
            i
        });
    }
    let mut seen = Vec::new();
    while let Some(i) = tasks.next().await {
        seen.push(i);
    }
    seen.sort();
    assert_eq!(seen, [0, 1, 2]);
    let joined = futures::future::join_all((0..2).map(|i| async move {
        tokio::task::yield_now().await;
        i * 10
    }))
    .await;
    assert_eq!(joined, [0, 10]);
    let buffered: Vec<u32> = futures::stream::iter(0..3u32)
        .map(|i| async move {
            braid::task::io_point("fetch").await;
            i
        })
        .buffered(2)
        .collect()
        .await;
    assert_eq!(buffered, [0, 1, 2]);
    assert_eq!(*counter.lock().await, 3);
}

#[braid::test]
async fn a_biased_select_takes_a_ready_first_branch() {
    // A message is queued on both kinds of channel: the first branch is ready when polled, so
    // a `biased;` select takes it in every schedule, as tokio's does.
    let (tx, rx) = braid::sync::mpsc::channel::<u32>(1);
    tx.send(1).await;
    let got = tokio::select! {
        biased;
        v = rx.recv() => Some(v),
        _ = std::future::ready(()) => None,
    };
    assert_eq!(got, Some(1));
    let (tx, mut rx) = mpsc::channel::<u32>(1);
    tx.send(2).await.unwrap();
    let got = tokio::select! {
        biased;
        v = rx.recv() => v,
        _ = std::future::ready(()) => None,
    };
    assert_eq!(got, Some(2));
}

#[braid::test]
async fn a_mutex_debug_shows_its_value_or_that_it_is_locked() {
    let mutex = Mutex::new(5);
    assert_eq!(format!("{mutex:?}"), "Mutex { data: 5 }");
    let guard = mutex.lock().await;
    assert_eq!(format!("{mutex:?}"), "Mutex { data: <locked> }");
    drop(guard);
}

#[braid::test]
async fn a_sleep_is_elapsed_once_polled_past_its_deadline() {
    let now = tokio::time::Instant::now();
    let mut sleep = std::pin::pin!(tokio::time::sleep_until(now));
    assert!(!sleep.is_elapsed(), "not before its first poll, as tokio's");
    sleep.as_mut().await;
    assert!(sleep.is_elapsed());
}

#[braid::test]
async fn a_broadcast_receivers_len_counts_what_it_lagged_behind() {
    let (tx, mut rx) = tokio::sync::broadcast::channel::<u32>(2);
    for i in 0..3 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.len(), 3, "lagged values count, as tokio's");
    assert!(matches!(
        rx.recv().await,
        Err(tokio::sync::broadcast::error::RecvError::Lagged(1))
    ));
    assert_eq!(rx.len(), 2);
}

/// The message of the panic a check's body hit.
fn panic_of(body: impl Fn() + Send + Sync + Clone + 'static) -> String {
    let report = braid::check(move || {
        let body = body.clone();
        async move { body() }
    })
    .run();
    match report.outcome {
        Outcome::Failed(f) => f.message,
        other => panic!("no panic: {other:?}"),
    }
}

#[test]
fn limits_panic_as_tokios_do() {
    let message = panic_of(|| {
        let _ = tokio::sync::broadcast::channel::<u32>(usize::MAX / 2 + 1);
    });
    assert!(message.contains("usize::MAX / 2"), "{message}");
    let message = panic_of(|| {
        let sem = tokio::sync::Semaphore::new(1);
        sem.add_permits(tokio::sync::Semaphore::MAX_PERMITS);
    });
    assert!(message.contains("MAX_PERMITS"), "{message}");
}

#[test]
fn a_facade_primitive_outside_a_run_says_what_to_do() {
    let err = std::panic::catch_unwind(|| {
        let _ = tokio::sync::Notify::new();
    })
    .expect_err("no run is in progress");
    let message = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        message.contains("outside a braid run") && message.contains("--cfg madsim"),
        "{message}"
    );
}

#[test]
fn a_deadlock_names_what_each_task_waits_on_and_who_holds_it() {
    let report = braid::check(|| async {
        let a = std::sync::Arc::new(Mutex::new(0));
        let b = std::sync::Arc::new(Mutex::new(0));
        let (a2, b2) = (a.clone(), b.clone());
        let t = tokio::spawn(async move {
            let _g = b2.lock().await;
            tokio::task::yield_now().await;
            let _h = a2.lock().await;
        });
        {
            let _g = a.lock().await;
            tokio::task::yield_now().await;
            let _h = b.lock().await;
        }
        t.await.unwrap();
    })
    .out(std::env::temp_dir())
    .run();
    let Outcome::Failed(failure) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(failure.invariant, "deadlock");
    for wait in [
        "main waits on lock mutex#2: held by task",
        "task waits on lock mutex#1: held by main",
    ] {
        assert!(failure.message.contains(wait), "{}", failure.message);
        assert!(failure.trace.contains(wait), "{}", failure.trace);
    }
    // Steps are named by the tokio operation, not the engine's access, with the line of the
    // call (`#[track_caller]`) in the trace but not in the message (a replay file would drift
    // whenever a line above it moved).
    assert!(
        failure
            .trace
            .contains("lock mutex#1 at tests/tokio_semantics.rs:"),
        "{}",
        failure.trace
    );
    assert!(!failure.message.contains(".rs:"), "{}", failure.message);
    assert!(
        !failure.trace.contains("write mutex#1"),
        "{}",
        failure.trace
    );
    let wait_for = &failure.run_trace.as_ref().expect("a trace").wait_for;
    assert_eq!(wait_for.len(), 2, "{wait_for:?}");
    assert!(
        wait_for.iter().all(|w| w.holders.len() == 1),
        "{wait_for:?}"
    );
}

#[test]
fn a_join_that_never_ends_names_the_task_joined() {
    let report = braid::check(|| async {
        let (_tx, mut rx) = mpsc::channel::<u32>(1);
        let t = tokio::spawn(async move { rx.recv().await });
        t.await.unwrap();
    })
    .out(std::env::temp_dir())
    .run();
    let Outcome::Failed(failure) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert!(
        failure.message.contains("has not finished")
            && failure.message.contains("waits on recv channel#1: empty"),
        "{}",
        failure.message
    );
}

/// A spin-wait on `tokio::task::yield_now` (which may go on at once, as tokio's may) is still
/// proved over every schedule: the yielder goes on at once at most once per cycle of yields.
/// Prints the schedules beside the fair `braid::task::yield_now`'s (the cost of tokio's
/// semantics).
#[test]
fn a_spin_wait_on_tokios_yield_is_still_proved() {
    fn spin(tokio_yield: bool) -> u64 {
        let report = braid::check(move || async move {
            let ready = std::sync::Arc::new(Mutex::new(false));
            let data = std::sync::Arc::new(Mutex::new(0u32));
            let (r, d) = (ready.clone(), data.clone());
            let producer = tokio::spawn(async move {
                *d.lock().await = 42;
                *r.lock().await = true;
            });
            while !*ready.lock().await {
                match tokio_yield {
                    true => tokio::task::yield_now().await,
                    false => braid::task::yield_now().await,
                }
            }
            assert_eq!(*data.lock().await, 42);
            producer.await.unwrap();
        })
        .strategy(Strategy::dfs(None))
        .run();
        match report.outcome {
            Outcome::Holds {
                exhaustive: true,
                runs,
                ..
            } => runs,
            other => panic!("tokio_yield {tokio_yield}: {other:?}"),
        }
    }
    let (tokio_runs, fair_runs) = (spin(true), spin(false));
    eprintln!("spin-wait proved: {tokio_runs} schedules with tokio's yield_now, {fair_runs} with the fair one");
    assert!(tokio_runs >= fair_runs);
}
