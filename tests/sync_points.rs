//! Synchronous operations are scheduling points (issue 15): an atomic load with no `.await`
//! around it can be preempted right before it, because braid runs a test's tasks on stacks of
//! their own; at await grain nothing changes.

use std::sync::Arc;

use braid::std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use braid::{Grain, Outcome};

// The test, unchanged but for the expected panic: the bug exists only if a task is
// preempted between two synchronous atomic accesses.
#[braid::test]
#[should_panic(expected = "assertion `left == right` failed")]
async fn torn_pair() {
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a2, b2) = (a.clone(), b.clone());
    let w = braid::tokio::spawn(async move {
        a2.store(1, SeqCst);
        b2.store(1, SeqCst);
    });
    let r = braid::tokio::spawn(async move {
        let x = a.load(SeqCst);
        let y = b.load(SeqCst);
        assert_eq!(x, y);
    });
    w.await.unwrap();
    r.await.unwrap();
}

async fn torn_pair_body() {
    {
        let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (a2, b2) = (a.clone(), b.clone());
        let w = braid::tokio::spawn(async move {
            a2.store(1, SeqCst);
            b2.store(1, SeqCst);
        });
        let r = braid::tokio::spawn(async move {
            let x = a.load(SeqCst);
            let y = b.load(SeqCst);
            assert_eq!(x, y, "torn");
        });
        w.await.unwrap();
        r.await.unwrap();
    }
}

#[test]
fn the_torn_pair_is_found_with_a_replay_file_that_reproduces_it() {
    // Named: the other tests in this binary run at the same time, and an unnamed check's replay
    // file is the shared `check.json`.
    let name = "sync_points/torn_pair_replay";
    let report = braid::check(torn_pair_body).name(name).seed(1).run();
    let failure = report.failure().expect("the torn read is found");
    assert!(failure.message.contains("torn"), "{}", failure.message);
    // The schedule stops the reader between its two loads, or the writer between its stores.
    assert!(
        failure.trace.contains("load atomic_usize#"),
        "{}",
        failure.trace
    );
    let file = failure.file.clone().expect("a replay file");
    let again = braid::check(torn_pair_body).name(name).replay(file).run();
    let again = again.failure().expect("the replay fails again");
    assert_eq!(
        again.trace, failure.trace,
        "the replay follows the same schedule"
    );
}

#[test]
fn every_strategy_finds_it_and_dfs_proves_the_fixed_version() {
    for strategy in [
        braid::Strategy::Random,
        braid::Strategy::Pct { depth: 3 },
        braid::Strategy::dfs(None),
    ] {
        let report = braid::check(torn_pair_body)
            .strategy(strategy)
            .runs(2000)
            .run();
        assert!(
            report.failure().is_some(),
            "{strategy:?} misses the torn read"
        );
    }
    // Fixed: the reader waits for the writer before reading.
    let fixed = braid::check(|| async {
        let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (a2, b2) = (a.clone(), b.clone());
        let w = braid::tokio::spawn(async move {
            a2.store(1, SeqCst);
            b2.store(1, SeqCst);
        });
        w.await.unwrap();
        let r = braid::tokio::spawn(async move { assert_eq!(a.load(SeqCst), b.load(SeqCst)) });
        r.await.unwrap();
    })
    .strategy(braid::Strategy::dfs(None))
    .run();
    match fixed.outcome {
        Outcome::Holds { exhaustive, .. } => assert!(exhaustive),
        other => panic!("the fixed version must hold: {other:?}"),
    }
}

#[test]
fn at_await_grain_synchronous_accesses_are_not_scheduling_points() {
    // The same race is invisible at await grain: no task can be preempted between two loads,
    // so the whole exhaustive search at that grain passes, and only the grain check (runs at
    // access grain) finds it and says so.
    let report = braid::check(torn_pair_body)
        .grain(Grain::Await)
        .strategy(braid::Strategy::dfs(None))
        .run();
    let failure = report
        .failure()
        .expect("the grain check finds what await grain hides");
    assert!(
        failure
            .message
            .contains("found at access grain by the grain check"),
        "{}",
        failure.message
    );
}

#[test]
fn a_std_mutex_makes_a_read_modify_write_atomic_and_its_absence_loses_an_update() {
    let lost = braid::check(|| async {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let t = braid::spawn(async move {
            let v = m.load(SeqCst);
            m.store(v + 1, SeqCst);
        });
        let v = n.load(SeqCst);
        n.store(v + 1, SeqCst);
        t.await.unwrap();
        assert_eq!(n.load(SeqCst), 2, "lost update");
    })
    .strategy(braid::Strategy::dfs(None))
    .run();
    assert!(lost.failure().is_some());

    let guarded = braid::check(|| async {
        let n = Arc::new(braid::std::sync::Mutex::new(0));
        let m = n.clone();
        let t = braid::spawn(async move {
            let mut g = m.lock().unwrap();
            let v = *g;
            braid::std::sync::atomic::AtomicBool::new(false).store(true, SeqCst);
            *g = v + 1;
        });
        {
            let mut g = n.lock().unwrap();
            *g += 1;
        }
        t.await.unwrap();
        assert_eq!(*n.lock().unwrap(), 2);
    })
    .strategy(braid::Strategy::dfs(None))
    .run();
    match guarded.outcome {
        Outcome::Holds { exhaustive, .. } => assert!(exhaustive),
        other => panic!("the lock makes it atomic: {other:?}"),
    }
}

#[test]
fn try_lock_on_a_held_std_mutex_would_block_in_some_schedule() {
    let report = braid::check(|| async {
        let n = Arc::new(braid::std::sync::Mutex::new(0));
        let m = n.clone();
        let t = braid::spawn(async move {
            let _g = m.lock().unwrap();
            braid::tokio::task::yield_now().await;
        });
        assert!(n.try_lock().is_ok(), "would block");
        t.await.unwrap();
    })
    .strategy(braid::Strategy::dfs(None))
    .run();
    let failure = report
        .failure()
        .expect("the holder can be preempted while holding it");
    assert!(failure.message.contains("would block"));
}
