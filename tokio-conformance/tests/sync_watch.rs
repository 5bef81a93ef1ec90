#![allow(clippy::cognitive_complexity)]
#![warn(rust_2018_idioms)]
// The tests not ported (`#[cfg(any())]`, see the README) leave some imports and helpers unused.
#![allow(unused_imports, dead_code)]

use braid::tokio;
use tokio_conformance::tokio_test;

use tokio::sync::watch;
use tokio_test::task::spawn;
use tokio_test::{
    assert_pending, assert_ready, assert_ready_eq, assert_ready_err, assert_ready_ok,
};

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn single_rx_recv() {
    let (tx, mut rx) = watch::channel("one");

    {
        // Not initially notified
        let mut t = spawn(rx.changed());
        assert_pending!(t.poll());
    }
    assert_eq!(*rx.borrow(), "one");

    {
        let mut t = spawn(rx.changed());
        assert_pending!(t.poll());

        tx.send("two").unwrap();

        assert!(t.is_woken());

        assert_ready_ok!(t.poll());
    }
    assert_eq!(*rx.borrow(), "two");

    {
        let mut t = spawn(rx.changed());
        assert_pending!(t.poll());

        drop(tx);

        assert!(t.is_woken());
        assert_ready_err!(t.poll());
    }
    assert_eq!(*rx.borrow(), "two");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn rx_version_underflow() {
    let (_tx, mut rx) = watch::channel("one");

    // Version starts at 2, validate we do not underflow
    rx.mark_changed();
    rx.mark_changed();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn rx_mark_changed() {
    let (tx, mut rx) = watch::channel("one");

    let mut rx2 = rx.clone();
    let mut rx3 = rx.clone();
    let mut rx4 = rx.clone();
    {
        rx.mark_changed();
        assert!(rx.has_changed().unwrap());

        let mut t = spawn(rx.changed());
        assert_ready_ok!(t.poll());
    }

    {
        assert!(!rx2.has_changed().unwrap());

        let mut t = spawn(rx2.changed());
        assert_pending!(t.poll());
    }

    {
        rx3.mark_changed();
        assert_eq!(*rx3.borrow(), "one");

        assert!(rx3.has_changed().unwrap());

        assert_eq!(*rx3.borrow_and_update(), "one");

        assert!(!rx3.has_changed().unwrap());

        let mut t = spawn(rx3.changed());
        assert_pending!(t.poll());
    }

    {
        tx.send("two").unwrap();
        assert!(rx4.has_changed().unwrap());
        assert_eq!(*rx4.borrow_and_update(), "two");

        rx4.mark_changed();
        assert!(rx4.has_changed().unwrap());
        assert_eq!(*rx4.borrow_and_update(), "two")
    }

    assert_eq!(*rx.borrow(), "two");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn rx_mark_unchanged() {
    let (tx, mut rx) = watch::channel("one");

    let mut rx2 = rx.clone();

    {
        assert!(!rx.has_changed().unwrap());

        rx.mark_changed();
        assert!(rx.has_changed().unwrap());

        rx.mark_unchanged();
        assert!(!rx.has_changed().unwrap());

        let mut t = spawn(rx.changed());
        assert_pending!(t.poll());
    }

    {
        assert!(!rx2.has_changed().unwrap());

        tx.send("two").unwrap();
        assert!(rx2.has_changed().unwrap());

        rx2.mark_unchanged();
        assert!(!rx2.has_changed().unwrap());
        assert_eq!(*rx2.borrow_and_update(), "two");
    }

    assert_eq!(*rx.borrow(), "two");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn multi_rx() {
    let (tx, mut rx1) = watch::channel("one");
    let mut rx2 = rx1.clone();

    {
        let mut t1 = spawn(rx1.changed());
        let mut t2 = spawn(rx2.changed());

        assert_pending!(t1.poll());
        assert_pending!(t2.poll());
    }
    assert_eq!(*rx1.borrow(), "one");
    assert_eq!(*rx2.borrow(), "one");

    let mut t2 = spawn(rx2.changed());

    {
        let mut t1 = spawn(rx1.changed());

        assert_pending!(t1.poll());
        assert_pending!(t2.poll());

        tx.send("two").unwrap();

        assert!(t1.is_woken());
        assert!(t2.is_woken());

        assert_ready_ok!(t1.poll());
    }
    assert_eq!(*rx1.borrow(), "two");

    {
        let mut t1 = spawn(rx1.changed());

        assert_pending!(t1.poll());

        tx.send("three").unwrap();

        assert!(t1.is_woken());
        assert!(t2.is_woken());

        assert_ready_ok!(t1.poll());
        assert_ready_ok!(t2.poll());
    }
    assert_eq!(*rx1.borrow(), "three");

    drop(t2);

    assert_eq!(*rx2.borrow(), "three");

    {
        let mut t1 = spawn(rx1.changed());
        let mut t2 = spawn(rx2.changed());

        assert_pending!(t1.poll());
        assert_pending!(t2.poll());

        tx.send("four").unwrap();

        assert_ready_ok!(t1.poll());
        assert_ready_ok!(t2.poll());
    }
    assert_eq!(*rx1.borrow(), "four");
    assert_eq!(*rx2.borrow(), "four");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn rx_observes_final_value() {
    // Initial value

    let (tx, mut rx) = watch::channel("one");
    drop(tx);

    {
        let mut t1 = spawn(rx.changed());
        assert_ready_err!(t1.poll());
    }
    assert_eq!(*rx.borrow(), "one");

    // Sending a value

    let (tx, mut rx) = watch::channel("one");

    tx.send("two").unwrap();

    {
        let mut t1 = spawn(rx.changed());
        assert_ready_ok!(t1.poll());
    }
    assert_eq!(*rx.borrow(), "two");

    {
        let mut t1 = spawn(rx.changed());
        assert_pending!(t1.poll());

        tx.send("three").unwrap();
        drop(tx);

        assert!(t1.is_woken());

        assert_ready_ok!(t1.poll());
    }
    assert_eq!(*rx.borrow(), "three");

    {
        let mut t1 = spawn(rx.changed());
        assert_ready_err!(t1.poll());
    }
    assert_eq!(*rx.borrow(), "three");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn poll_close() {
    let (tx, rx) = watch::channel("one");

    {
        let mut t = spawn(tx.closed());
        assert_pending!(t.poll());

        drop(rx);

        assert!(t.is_woken());
        assert_ready!(t.poll());
    }

    assert!(tx.send("two").is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn borrow_and_update() {
    let (tx, mut rx) = watch::channel("one");

    assert!(!rx.has_changed().unwrap());

    tx.send("two").unwrap();
    assert!(rx.has_changed().unwrap());
    assert_ready!(spawn(rx.changed()).poll()).unwrap();
    assert_pending!(spawn(rx.changed()).poll());
    assert!(!rx.has_changed().unwrap());

    tx.send("three").unwrap();
    assert!(rx.has_changed().unwrap());
    assert_eq!(*rx.borrow_and_update(), "three");
    assert_pending!(spawn(rx.changed()).poll());
    assert!(!rx.has_changed().unwrap());

    drop(tx);
    assert_eq!(*rx.borrow_and_update(), "three");
    assert_ready!(spawn(rx.changed()).poll()).unwrap_err();
    assert!(rx.has_changed().is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn reopened_after_subscribe() {
    let (tx, rx) = watch::channel("one");
    assert!(!tx.is_closed());

    drop(rx);
    assert!(tx.is_closed());

    let rx = tx.subscribe();
    assert!(!tx.is_closed());

    drop(rx);
    assert!(tx.is_closed());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(panic = "unwind")]
#[cfg(not(target_family = "wasm"))] // wasm currently doesn't support unwinding
async fn send_modify_panic() {
    let (tx, mut rx) = watch::channel("one");

    tx.send_modify(|old| *old = "two");
    assert_eq!(*rx.borrow_and_update(), "two");

    let mut rx2 = rx.clone();
    assert_eq!(*rx2.borrow_and_update(), "two");

    let mut task = spawn(rx2.changed());

    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tx.send_modify(|old| {
            *old = "panicked";
            panic!();
        })
    }));
    assert!(result.is_err());

    assert_pending!(task.poll());
    assert_eq!(*rx.borrow(), "panicked");

    tx.send_modify(|old| *old = "three");
    assert_ready_ok!(task.poll());
    assert_eq!(*rx.borrow_and_update(), "three");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn multiple_sender() {
    let (tx1, mut rx) = watch::channel(0);
    let tx2 = tx1.clone();

    let mut t = spawn(async {
        rx.changed().await.unwrap();
        let v1 = *rx.borrow_and_update();
        rx.changed().await.unwrap();
        let v2 = *rx.borrow_and_update();
        (v1, v2)
    });

    tx1.send(1).unwrap();
    assert_pending!(t.poll());
    tx2.send(2).unwrap();
    assert_ready_eq!(t.poll(), (1, 2));
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn receiver_is_notified_when_last_sender_is_dropped() {
    let (tx1, mut rx) = watch::channel(0);
    let tx2 = tx1.clone();

    let mut t = spawn(rx.changed());
    assert_pending!(t.poll());

    drop(tx1);
    assert!(!t.is_woken());
    drop(tx2);

    assert!(t.is_woken());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn receiver_changed_is_cooperative() {
    let (tx, mut rx) = watch::channel(());

    drop(tx);

    tokio::select! {
        biased;
        _ = async {
            loop {
                assert!(rx.changed().await.is_err());
            }
        } => {},
        _ = tokio::task::yield_now() => {},
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn receiver_changed_is_cooperative_ok() {
    let (tx, mut rx) = watch::channel(());

    tokio::select! {
        biased;
        _ = async {
            loop {
                assert!(tx.send(()).is_ok());
                assert!(rx.changed().await.is_ok());
            }
        } => {},
        _ = tokio::task::yield_now() => {},
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn receiver_wait_for_is_cooperative() {
    let (tx, mut rx) = watch::channel(0);

    drop(tx);

    tokio::select! {
        biased;
        _ = async {
            loop {
                assert!(rx.wait_for(|val| *val == 1).await.is_err());
            }
        } => {},
        _ = tokio::task::yield_now() => {},
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn receiver_wait_for_is_cooperative_ok() {
    let (tx, mut rx) = watch::channel(0);

    tokio::select! {
        biased;
        _ = async {
            loop {
                assert!(tx.send(1).is_ok());
                assert!(rx.wait_for(|val| *val == 1).await.is_ok());
            }
        } => {},
        _ = tokio::task::yield_now() => {},
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn sender_closed_is_cooperative() {
    let (tx, rx) = watch::channel(());

    drop(rx);

    tokio::select! {
        _ = async {
            loop {
                tx.closed().await;
            }
        } => {},
        _ = tokio::task::yield_now() => {},
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn changed_succeeds_on_closed_channel_with_unseen_value() {
    let (tx, mut rx) = watch::channel("A");
    tx.send("B").unwrap();

    drop(tx);

    rx.changed()
        .await
        .expect("should not return error as long as the current value is not seen");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn changed_errors_on_closed_channel_with_seen_value() {
    let (tx, mut rx) = watch::channel("A");
    drop(tx);

    rx.changed()
        .await
        .expect_err("should return error if the tx is closed and the current value is seen");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn has_changed_errors_on_closed_channel_with_unseen_value() {
    let (tx, rx) = watch::channel("A");
    tx.send("B").unwrap();

    drop(tx);

    rx.has_changed()
        .expect_err("`has_changed` returns an error if and only if channel is closed. Even if the current value is not seen.");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn has_changed_errors_on_closed_channel_with_seen_value() {
    let (tx, rx) = watch::channel("A");
    drop(tx);

    rx.has_changed()
        .expect_err("`has_changed` returns an error if and only if channel is closed.");
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn receiver_is_closed_after_all_senders_are_dropped() {
    let (tx, rx) = watch::channel("A");
    let tx2 = tx.clone();
    assert!(!rx.is_closed());

    drop(tx);
    assert!(!rx.is_closed());

    drop(tx2);
    assert!(rx.is_closed());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn wait_for_errors_on_closed_channel_true_predicate() {
    let (tx, mut rx) = watch::channel("A");
    tx.send("B").unwrap();
    drop(tx);

    rx.wait_for(|_| true).await.expect(
        "`wait_for` call does not return error even if channel is closed when predicate is true for last value.",
    );
}
