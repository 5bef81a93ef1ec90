//! A test that shares state braid does not see, and does not say so (issue 30, item 2: "a
//! warning where braid can tell"). Task `b` reads a std atomic that task `a` sets right after
//! its one braid step: the two steps touch different braid objects, so the reduced search takes
//! either order as the same and explores one, but `b`'s reading depends on the order. The
//! reduction audit, which re-explores a sample of what the reduced search pruned without
//! reduction, reaches the failing order and reports it as the test's failure, with the hint.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

use braid::std::sync::atomic::AtomicUsize;
use braid::{Outcome, Strategy};

/// `a` stores to one braid atomic, then sets a std flag; `b` stores to another, then reads the
/// flag: what `b` read, false in every schedule where `b` goes first.
async fn race_for_the_flag() -> bool {
    let flag = Arc::new(AtomicBool::new(false));
    let (x, y) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let f = flag.clone();
    let a = braid::spawn(async move {
        x.store(1, SeqCst);
        f.store(true, SeqCst);
    });
    let b = braid::spawn(async move {
        y.store(1, SeqCst);
        flag.load(SeqCst)
    });
    a.await.unwrap();
    b.await.unwrap()
}

/// The race, with the test asserting that `b` saw the flag.
fn unseen_flag() -> braid::Check {
    braid::check(|| async {
        assert!(race_for_the_flag().await, "b read the flag before a set it");
    })
    .name("unseen_flag")
    .strategy(Strategy::dfs(None))
    .out(std::env::temp_dir().join("braid-unseen-state"))
}

/// A pass with every schedule explored.
fn assert_proved(outcome: &Outcome) {
    assert!(
        matches!(
            outcome,
            Outcome::Holds {
                exhaustive: true,
                ..
            }
        ),
        "{outcome:?}"
    );
}

fn failure_message(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::Failed(f) => &f.message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn the_reduced_search_alone_proves_the_unseen_race_away() {
    // What the audit guards against: without it, the reduction's "holds" is false.
    let report = unseen_flag().without_reduction_audit().run();
    assert_proved(&report.outcome);
}

#[test]
fn the_audit_finds_it_and_says_why() {
    let report = unseen_flag().run();
    let message = failure_message(&report.outcome);
    assert!(
        message.contains("b read the flag before a set it"),
        "{message}"
    );
    assert!(
        message.contains("found by the reduction audit"),
        "{message}"
    );
    assert!(message.contains("plain_state"), "{message}");
    // The failure is a real schedule: its replay file fails the same way.
    let Outcome::Failed(failure) = &report.outcome else {
        unreachable!()
    };
    let file = failure.file.clone().expect("a replay file");
    let again = unseen_flag().replay(&file).run();
    assert!(
        failure_message(&again.outcome).contains("b read the flag before a set it"),
        "{:?}",
        again.outcome
    );
}

#[test]
fn declared_plain_state_is_searched_without_reduction_and_fails() {
    let report = unseen_flag().plain_state().run();
    let message = failure_message(&report.outcome);
    assert!(
        message.contains("b read the flag before a set it"),
        "{message}"
    );
    assert!(!message.contains("reduction audit"), "{message}");
}

#[test]
fn a_test_whose_shared_state_braid_sees_passes_the_audit() {
    // The same shape with the flag a braid atomic: a dependency the reduction sees.
    let report = braid::check(|| async {
        let flag = Arc::new(braid::std::sync::atomic::AtomicBool::new(false));
        let x = Arc::new(AtomicUsize::new(0));
        let f = flag.clone();
        let a = braid::spawn(async move {
            x.store(1, SeqCst);
            f.store(true, SeqCst);
        });
        let b = braid::spawn(async move { flag.load(SeqCst) });
        a.await.unwrap();
        let _ = b.await.unwrap();
    })
    .strategy(Strategy::dfs(None))
    .run();
    assert_proved(&report.outcome);
}

#[test]
fn an_outcome_only_the_audit_reaches_sends_the_test_back_to_plain_search() {
    // No assertion fails: the test only logs what `b` read. The reduced search logs `true`
    // alone; the audit reaches the end state where `false` was logged, so the test is searched
    // again without reduction, and its pass says so.
    let report = braid::check(|| async {
        let log = braid::Log::new([braid::always("anything", |_: &[bool]| true)]);
        log.push(race_for_the_flag().await);
    })
    .name("unseen_flag_logged")
    .strategy(Strategy::dfs(None))
    .run();
    match &report.outcome {
        Outcome::Holds {
            exhaustive: true,
            coverage,
            ..
        } => assert!(
            coverage.contains("searched without reduction") && coverage.contains("plain_state"),
            "{coverage}"
        ),
        other => panic!("expected a pass after plain search, got {other:?}"),
    }
}
