//! Virtual time (issue 15): timers never wait on the wall clock, time jumps when every task
//! waits, and timers due at the same instant fire in an order the strategy picks.

use std::time::Duration;

use braid::tokio::{self, sync::oneshot, time};

#[braid::test]
async fn an_hour_passes_instantly() {
    let (_tx, rx) = oneshot::channel::<()>();
    assert!(time::timeout(Duration::from_secs(3600), rx).await.is_err());
}

// Both deadlines are 10 ms: which fires first is the strategy's choice, so this fails in some
// schedule (the expected panic).
#[braid::test]
#[should_panic(expected = "is_ok")]
async fn reply_races_the_deadline() {
    let (tx, rx) = oneshot::channel::<u32>();
    tokio::spawn(async move {
        time::sleep(Duration::from_millis(10)).await;
        let _ = tx.send(1);
    });
    assert!(time::timeout(Duration::from_millis(10), rx).await.is_ok());
}

#[test]
fn simultaneous_timers_fire_in_either_order_and_both_orders_are_explored() {
    let race = || async {
        let (tx, rx) = oneshot::channel::<u32>();
        tokio::spawn(async move {
            time::sleep(Duration::from_millis(10)).await;
            let _ = tx.send(1);
        });
        assert!(
            time::timeout(Duration::from_millis(10), rx).await.is_ok(),
            "the deadline won"
        );
    };
    let report = braid::check(race)
        .strategy(braid::Strategy::dfs(None))
        .run();
    let failure = report.failure().expect("one order times out");
    assert!(failure.message.contains("the deadline won"));
    assert!(
        failure.trace.contains("time advances to 10ms"),
        "{}",
        failure.trace
    );
    // The replay reproduces the order the strategy picked.
    let again = braid::check(race)
        .replay(failure.file.clone().unwrap())
        .run();
    assert!(again.failure().is_some());
}

#[test]
fn time_only_moves_when_every_task_waits_and_a_run_of_timers_is_no_deadlock() {
    let report = braid::check(|| async {
        let start = time::Instant::now();
        let ticker = tokio::spawn(async move {
            let mut every = time::interval(Duration::from_millis(3));
            for _ in 0..4 {
                every.tick().await;
            }
            time::Instant::now()
        });
        time::sleep(Duration::from_millis(5)).await;
        assert_eq!(start.elapsed(), Duration::from_millis(5));
        let ticked = ticker.await.unwrap();
        // Ticks at 0, 3, 6, 9 ms.
        assert_eq!(ticked - start, Duration::from_millis(9));
    })
    // tokio's paused clock: with a clock jump, main woken at 5 ms may be slow enough to see
    // the 6 ms tick's time pass first.
    .clock_jumps(0)
    .strategy(braid::Strategy::dfs(None))
    .run();
    assert!(
        matches!(
            report.outcome,
            braid::Outcome::Holds {
                exhaustive: true,
                ..
            }
        ),
        "{:?}",
        report.outcome
    );
}

#[test]
fn a_dropped_sender_ends_the_wait_and_a_timeout_drops_its_future() {
    braid::check(|| async {
        let (tx, rx) = oneshot::channel::<u32>();
        drop(tx);
        assert!(rx.await.is_err());
        let (tx, rx) = oneshot::channel::<u32>();
        assert!(time::timeout(Duration::from_millis(1), rx).await.is_err());
        // The receiver went with the timeout: the send fails.
        assert_eq!(tx.send(7), Err(7));
    })
    .strategy(braid::Strategy::dfs(None))
    .assert_holds();
}
