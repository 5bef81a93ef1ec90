//! The pubsub acceptance table, both ways, from the scenario files; the fixed variant's guards
//! knocked out are caught; one shrunk trace per bug family is snapshotted.

mod common;

use common::*;
use models::registry;
use sim::scenario::Expected;

fn violated(name: &str) {
    let s = scenario(name);
    let Expected::Violation(expected) = &s.expected else {
        panic!("{name} should expect a violation");
    };
    let model = build(&s, None);
    for strategy in STRATEGIES {
        assert_found(model.as_ref(), strategy, expected);
    }
}

fn holds(name: &str) {
    let s = scenario(name);
    assert_eq!(s.expected, Expected::Holds, "{name}");
    let model = build(&s, None);
    for strategy in STRATEGIES {
        let summary = explore(model.as_ref(), strategy, false);
        assert!(
            summary.violations.is_empty(),
            "{strategy:?}: {:?}",
            summary.violations
        );
        assert_eq!(summary.runs, BUDGET);
        assert!(summary.distinct_schedules > 100);
    }
}

#[test]
fn blocking_retain_deadlocks() {
    violated("pubsub-full-queue-blocking-retain");
}

#[test]
fn drop_hint_loses_a_retained_topic() {
    violated("pubsub-full-queue-drop-hint");
}

#[test]
fn coalesced_reconcile_holds() {
    holds("pubsub-full-queue-coalesced-reconcile");
    holds("pubsub-full-queue-teardown-coalesced-reconcile");
}

#[test]
fn every_pubsub_mutant_is_caught() {
    let s = scenario("pubsub-full-queue-coalesced-reconcile");
    let guards = registry::guards("pubsub", "coalesced-reconcile").unwrap();
    assert_eq!(guards, ["reconcile-arm", "retain-wakeup"]);
    for guard in guards {
        let model = build(&s, Some(guard));
        for strategy in STRATEGIES {
            assert_found(
                model.as_ref(),
                strategy,
                &["retained-subscribed".to_string()],
            );
        }
    }
    assert!(registry::guards("pubsub", "drop-hint").unwrap().is_empty());
}

#[test]
fn bad_parameters_are_errors() {
    let err = |p: serde_json::Value| {
        registry::build("pubsub", "drop-hint", &p)
            .err()
            .expect("rejected")
            .to_string()
    };
    assert!(err(serde_json::json!({"queues": 1})).contains("unknown field"));
    assert!(err(serde_json::json!({"queue": 0})).contains("queue"));
}

#[test]
fn blocking_retain_deadlock_trace() {
    insta::assert_snapshot!(shrunk_trace("pubsub-full-queue-blocking-retain"));
}

#[test]
fn drop_hint_lost_topic_trace() {
    insta::assert_snapshot!(shrunk_trace("pubsub-full-queue-drop-hint"));
}
