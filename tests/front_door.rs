//! The front door, as a user meets it: `#[braid::test]` and `braid::check` on small races,
//! a failure as a replay file, replays, committed regression files, drift, and properties.

use std::sync::Arc;

use braid::{Outcome, RegressionStatus, Source, Strategy};

/// Issue 14's first test: the update is lost in some schedule.
async fn lost_update() {
    let counter = Arc::new(braid::sync::Mutex::new(0u32));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let counter = counter.clone();
        tasks.push(braid::spawn(async move {
            let v = *counter.lock().await;
            braid::task::yield_now().await;
            *counter.lock().await = v + 1;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(*counter.lock().await, 2);
}

/// The same with the lock held across the update: holds in every schedule.
async fn lock_held() {
    let counter = Arc::new(braid::sync::Mutex::new(0u32));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let counter = counter.clone();
        tasks.push(braid::spawn(async move {
            let mut guard = counter.lock().await;
            braid::task::yield_now().await;
            *guard += 1;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(*counter.lock().await, 2);
}

#[braid::test]
#[should_panic(expected = "assertion `left == right` failed")]
async fn lost_update_fails_as_a_test() {
    lost_update().await;
}

#[braid::test(runs = 5_000, strategy = "pct", depth = 2)]
async fn lock_held_across_the_update_passes() {
    lock_held().await;
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[test]
fn a_failure_is_a_shrunk_replay_file_with_the_command_that_reruns_it() {
    let out = temp_dir();
    let report = braid::check(lost_update)
        .name("front_door::lost_update")
        .out(out.path())
        .run();
    let failure = report
        .failure()
        .expect("the lost update is found by default");
    assert_eq!(failure.invariant, "panic");
    assert!(failure.message.contains("left: 1"), "{}", failure.message);
    assert_eq!(failure.source, Source::Explored);
    // The yield hands over fairly, so the race needs no preemption at all.
    assert_eq!(failure.preemptions, 0, "shrunk to no preemption");
    let file = failure.file.clone().expect("a replay file was written");
    assert!(file.starts_with(out.path()));
    assert!(failure
        .rerun
        .starts_with(&format!("BRAID_REPLAY={}", file.display())));
    assert!(failure.trace.contains("lock mutex#1"), "{}", failure.trace);
    let shown = failure.to_string();
    for part in [
        "front_door::lost_update",
        "seed 1",
        "run ",
        "0 preemptions",
        "replay file",
    ] {
        assert!(shown.contains(part), "{part:?} missing from:\n{shown}");
    }

    // The file replays in one run and fails the same way.
    let replayed = braid::check(lost_update)
        .name("front_door::lost_update")
        .replay(&file)
        .run();
    let again = replayed.failure().expect("the replay fails again");
    assert_eq!(again.source, Source::Replay);
    assert_eq!(
        (&again.invariant, &again.message),
        (&failure.invariant, &failure.message)
    );
    assert_eq!(again.steps, failure.steps);

    // A replay file names its test: another check explores as usual.
    let other = braid::check(lock_held)
        .name("front_door::other")
        .replay(&file)
        .runs(200)
        .run();
    assert!(
        matches!(other.outcome, Outcome::Holds { .. }),
        "{:?}",
        other.outcome
    );
}

#[test]
fn a_replay_of_a_changed_test_is_drift() {
    let out = temp_dir();
    let found = braid::check(lost_update)
        .name("t::drift")
        .out(out.path())
        .run();
    let file = found.failure().unwrap().file.clone().unwrap();
    // The "same" test, now with a third task: the recorded schedule no longer fits it exactly.
    let changed = || async {
        let extra = braid::spawn(async {});
        lost_update().await;
        extra.await.unwrap();
    };
    let report = braid::check(changed).name("t::drift").replay(&file).run();
    match report.outcome {
        Outcome::Drifted(why) => assert!(why.contains("drifted"), "{why}"),
        other => panic!("expected drift, got {other:?}"),
    }
}

#[test]
fn committed_regression_files_are_replayed_first() {
    let (out, regressions) = (temp_dir(), temp_dir());
    let found = braid::check(lost_update)
        .name("t::regress")
        .out(out.path())
        .run();
    let file = found.failure().unwrap().file.clone().unwrap();
    std::fs::copy(&file, regressions.path().join("lost.json")).unwrap();
    // A file of another test in the same folder is not this test's.
    let other = braid::check(lost_update)
        .name("t::someone_else")
        .out(out.path())
        .run();
    std::fs::copy(
        other.failure().unwrap().file.as_ref().unwrap(),
        regressions.path().join("other.json"),
    )
    .unwrap();

    // The bug is back: the regression file fails before any exploration (runs = 1 would not
    // be enough to find it by search from this seed with DFS's first schedule).
    let report = braid::check(lost_update)
        .name("t::regress")
        .regressions(regressions.path())
        .strategy(Strategy::Random)
        .runs(1)
        .out(out.path())
        .run();
    let failure = report.failure().expect("the regression fails again");
    assert_eq!(failure.source, Source::Regression);
    assert_eq!(report.regressions.len(), 1, "only this test's file");

    // Fixed: the file passes, and the exploration holds.
    let fixed = braid::check(lock_held)
        .name("t::regress")
        .regressions(regressions.path())
        .runs(500)
        .run();
    assert!(
        matches!(fixed.outcome, Outcome::Holds { .. }),
        "{:?}",
        fixed.outcome
    );
    assert!(
        matches!(
            &fixed.regressions[0].status,
            RegressionStatus::Passes | RegressionStatus::Drifted(_)
        ),
        "{:?}",
        fixed.regressions[0].status
    );

    // A corrupt file is reported as drifted, not trusted and not fatal.
    std::fs::write(regressions.path().join("broken.json"), "{ not json").unwrap();
    let report = braid::check(lock_held)
        .name("t::regress")
        .regressions(regressions.path())
        .runs(100)
        .run();
    assert!(report.regressions.iter().any(
        |r| r.file.ends_with("broken.json") && matches!(r.status, RegressionStatus::Drifted(_))
    ));
}

#[test]
fn a_requested_proof_that_does_not_finish_is_not_a_pass() {
    let report = braid::check(lock_held)
        .strategy(Strategy::dfs(None))
        .runs(3)
        .run();
    match report.outcome {
        Outcome::Inconclusive(why) => assert!(why.contains("did not finish"), "{why}"),
        other => panic!("expected inconclusive, got {other:?}"),
    }
    let proved = braid::check(lock_held).strategy(Strategy::dfs(None)).run();
    assert!(
        matches!(
            proved.outcome,
            Outcome::Holds {
                exhaustive: true,
                ..
            }
        ),
        "{:?}",
        proved.outcome
    );
}

#[test]
fn the_default_plan_proves_a_small_test_and_says_so() {
    match braid::check(lock_held).run().outcome {
        Outcome::Holds {
            exhaustive,
            coverage,
            ..
        } => {
            assert!(exhaustive);
            assert!(coverage.starts_with("every fair schedule"), "{coverage}");
        }
        other => panic!("expected a proof, got {other:?}"),
    }
}

#[test]
fn always_is_judged_at_every_event_and_eventually_at_the_end() {
    // Two tasks log their ids; "in order" is broken by one schedule, "both" by none.
    let body = || async {
        let log = braid::Log::new([
            braid::always("in order", |e: &[u32]| e.windows(2).all(|w| w[0] < w[1])),
            braid::eventually("both", |e: &[u32]| e.len() == 2),
        ]);
        let l = log.clone();
        let t = braid::spawn(async move { l.push(1) });
        // A scheduling point at which either task may go first.
        let gate = braid::sync::Mutex::new(());
        drop(gate.lock().await);
        log.push(2);
        t.await.unwrap();
    };
    let report = braid::check(body).run();
    let failure = report.failure().expect("2 before 1 happens");
    assert_eq!(failure.invariant, "in order");
    assert!(failure.message.contains("[2, 1]"), "{}", failure.message);

    let lost = || async {
        let log = braid::Log::new([braid::eventually("both", |e: &[u32]| e.len() == 2)]);
        let l = log.clone();
        let t = braid::spawn(async move {
            if braid::engine::choose(2).await == 0 {
                l.push(1);
            }
        });
        log.push(2);
        t.await.unwrap();
    };
    let failure = braid::check(lost)
        .run()
        .failure()
        .cloned()
        .expect("one event is lost");
    assert_eq!(failure.invariant, "both");
    assert!(
        failure.message.contains("does not hold at the end"),
        "{}",
        failure.message
    );
}

#[test]
fn a_deadlock_of_two_locks_is_found() {
    let body = || async {
        let (a, b) = (
            Arc::new(braid::sync::Mutex::new(())),
            Arc::new(braid::sync::Mutex::new(())),
        );
        let (a2, b2) = (a.clone(), b.clone());
        let t = braid::spawn(async move {
            let _a = a2.lock().await;
            let _b = b2.lock().await;
        });
        {
            let _b = b.lock().await;
            let _a = a.lock().await;
        }
        t.await.unwrap();
    };
    let failure = braid::check(body)
        .run()
        .failure()
        .cloned()
        .expect("lock order deadlock");
    assert_eq!(failure.invariant, "deadlock");
    assert!(failure.message.contains("mutex#"), "{}", failure.message);
}

#[test]
fn a_coarse_grain_holds_only_until_access_grain_runs_find_the_race() {
    // The reorder shape: a setter writes a = 1 then b = -1; a checker reads b then a.
    let body = || async {
        let a = std::rc::Rc::new(braid::engine::sync::Atomic::new("a", 0i64));
        let b = std::rc::Rc::new(braid::engine::sync::Atomic::new("b", 0i64));
        let (a2, b2) = (a.clone(), b.clone());
        let setter = braid::spawn(async move {
            a2.store(1).await;
            b2.store(-1).await;
        });
        let seen_b = b.load().await;
        let seen_a = a.load().await;
        let pair = (seen_a, seen_b);
        assert!(
            pair == (0, 0) || pair == (1, -1),
            "saw a torn pair {pair:?}"
        );
        setter.await.unwrap();
    };
    let default = braid::check(body).run();
    assert_eq!(
        default
            .failure()
            .expect("found at the default grain")
            .invariant,
        "panic"
    );

    let coarse = braid::check(body).grain(braid::Grain::Await).run();
    let failure = coarse.failure().expect("the grain check finds it");
    assert!(
        failure.message.contains("access grain"),
        "{}",
        failure.message
    );
}

/// A test whose code braid cannot see (std's lock, here; real tokio alike) holds, and says
/// that braid saw nothing of it; one on braid's primitives does not say so.
#[test]
fn a_pass_that_saw_no_operation_of_yours_says_so() {
    let coverage = |report: braid::Report| match report.outcome {
        Outcome::Holds { coverage, .. } => coverage,
        other => panic!("{other:?}"),
    };
    let unseen = braid::check(|| async {
        let n = Arc::new(std::sync::Mutex::new(0));
        let m = n.clone();
        let t = braid::tokio::spawn(async move { *m.lock().unwrap() += 1 });
        *n.lock().unwrap() += 1;
        t.await.unwrap();
        assert_eq!(*n.lock().unwrap(), 2);
    })
    .run();
    let said = coverage(unseen);
    assert!(said.starts_with("every schedule"), "{said}");
    assert!(
        said.contains(
            "braid saw no operation of yours: code on real tokio or std::sync is not explored"
        ),
        "{said}"
    );
    let seen = braid::check(|| async {
        let n = Arc::new(braid::std::sync::Mutex::new(0));
        let m = n.clone();
        let t = braid::tokio::spawn(async move { *m.lock().unwrap() += 1 });
        *n.lock().unwrap() += 1;
        t.await.unwrap();
    })
    .run();
    let said = coverage(seen);
    assert!(!said.contains("saw no operation"), "{said}");
}
