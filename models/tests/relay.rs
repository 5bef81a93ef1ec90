//! The relay's acceptance table, both ways, from the scenario files: each buggy variant is
//! violated by exploration (not a fixed schedule) under a fixed seed and budget, naming the
//! expected invariant; each fixed variant holds under the same budget with both strategies.
//! Each guard of the fixed variants, knocked out, is caught; one shrunk trace per bug family is
//! snapshotted.

mod common;

use common::*;
use models::registry;
use sim::scenario::Expected;
use sim::strategy::StrategyKind;

/// A row of the table: the buggy variant's scenario is violated (naming its invariant), the
/// fixed variant's scenario holds — both with both strategies.
fn row(buggy: &str, fixed: &str) {
    let b = scenario(buggy);
    let Expected::Violation(expected) = &b.expected else {
        panic!("{buggy} should expect a violation");
    };
    let model = build(&b, None);
    for strategy in STRATEGIES {
        assert_found(model.as_ref(), strategy, expected);
    }
    holds(fixed);
}

fn holds(name: &str) {
    let f = scenario(name);
    assert_eq!(f.expected, Expected::Holds, "{name}");
    let model = build(&f, None);
    for strategy in STRATEGIES {
        assert_holds(model.as_ref(), strategy);
    }
}

#[test]
fn req_then_close_during_access_checks() {
    row(
        "relay-req-close-during-checks-register-token",
        "relay-req-close-during-checks-rejection-fence",
    );
}

#[test]
fn two_same_id_reqs() {
    row(
        "relay-same-id-register-token",
        "relay-same-id-rejection-fence",
    );
}

#[test]
fn same_id_replacement_during_historical_delivery() {
    row(
        "relay-replace-during-history-admission",
        "relay-replace-during-history-historical-fence",
    );
}

#[test]
fn close_during_historical_delivery() {
    row(
        "relay-close-during-history-admission",
        "relay-close-during-history-historical-fence",
    );
}

#[test]
fn stale_rejection_after_replacement() {
    row(
        "relay-stale-rejection-replace-historical-fence",
        "relay-stale-rejection-replace-rejection-fence",
    );
}

#[test]
fn stale_rejection_after_close() {
    row(
        "relay-stale-rejection-close-historical-fence",
        "relay-stale-rejection-close-rejection-fence",
    );
}

#[test]
fn revoke_of_a_replaced_holder_with_a_pending_replacement() {
    row(
        "relay-revoke-replaced-register-token",
        "relay-revoke-replaced-rejection-fence",
    );
}

#[test]
fn live_fanout_racing_close_and_replacement() {
    row(
        "relay-live-race-rejection-fence",
        "relay-live-race-generation-fence",
    );
}

#[test]
fn pending_requests_count_toward_the_limit() {
    row(
        "relay-limit-pending-register-token",
        "relay-limit-pending-rejection-fence",
    );
}

#[test]
fn close_during_topic_retain_and_disconnect_mid_claim_keep_integrity() {
    holds("relay-close-during-retain-generation-fence");
    holds("relay-disconnect-mid-claim-generation-fence");
}

/// Each guard of the fixed variants, knocked out, is caught by the scenario that exercises it.
#[test]
fn every_relay_mutant_is_caught() {
    let cases = [
        (
            "close-owner-check",
            "relay-stale-rejection-replace-rejection-fence",
            "newest-owns",
        ),
        (
            "live-claim-owner-check",
            "relay-same-id-rejection-fence",
            "newest-owns",
        ),
        (
            "eviction-replaced-holder-check",
            "relay-revoke-replaced-rejection-fence",
            "no-stale-frame",
        ),
    ];
    for (guard, name, invariant) in cases {
        let s = scenario(name);
        for variant in ["rejection-fence", "generation-fence"] {
            let model = registry::build_mutant("relay", variant, &s.params, Some(guard))
                .expect("the guard exists");
            let expected = [invariant.to_string()];
            assert_found(model.as_ref(), StrategyKind::Pct { depth: 3 }, &expected);
        }
    }
    assert_eq!(
        registry::guards("relay", "generation-fence").unwrap(),
        [
            "close-owner-check",
            "live-claim-owner-check",
            "eviction-replaced-holder-check"
        ]
    );
    assert!(registry::guards("relay", "admission").unwrap().is_empty());
    assert!(registry::build_mutant(
        "relay",
        "admission",
        &serde_json::json!({}),
        Some("close-owner-check")
    )
    .is_err());
}

#[test]
fn bad_parameters_are_errors() {
    let err = |p: serde_json::Value| {
        registry::build("relay", "generation-fence", &p)
            .err()
            .expect("rejected")
            .to_string()
    };
    assert!(err(serde_json::json!({"scripts": "req"})).contains("unknown field"));
    assert!(err(serde_json::json!({"script": "req-req"})).contains("unknown variant"));
    assert!(err(serde_json::json!({"limit": 0})).contains("limit"));
    assert!(err(serde_json::json!({"stored": 4})).contains("stored"));
}

#[test]
fn register_token_older_replaces_newer_trace() {
    insta::assert_snapshot!(shrunk_trace("relay-same-id-register-token"));
}

#[test]
fn register_token_events_after_closed_trace() {
    insta::assert_snapshot!(shrunk_trace("relay-req-close-during-checks-register-token"));
}

#[test]
fn admission_historical_after_replacement_trace() {
    insta::assert_snapshot!(shrunk_trace("relay-replace-during-history-admission"));
}

#[test]
fn historical_fence_stale_rejection_trace() {
    insta::assert_snapshot!(shrunk_trace(
        "relay-stale-rejection-replace-historical-fence"
    ));
}

#[test]
fn rejection_fence_stale_live_event_trace() {
    insta::assert_snapshot!(shrunk_trace("relay-live-race-rejection-fence"));
}

#[test]
fn register_token_limit_ignores_pending_trace() {
    insta::assert_snapshot!(shrunk_trace("relay-limit-pending-register-token"));
}

/// An unbounded DFS under a run budget deepens its preemption bound (0, 1, ...) instead of
/// spending the budget deep in one subtree: the live-race bug needs one preemption, so it is
/// found, and the summary says how far the proof got.
#[test]
fn a_budgeted_dfs_deepens_and_finds_the_one_preemption_live_race() {
    let s = scenario("relay-live-race-rejection-fence");
    let model = build(&s, None);
    let search = |deepening: bool| {
        sim::explore::Explorer::new(model.as_ref())
            .strategy(StrategyKind::Dfs {
                preemption_bound: None,
                reduction: sim::strategy::Reduction::PartialOrder,
            })
            .runs(20_000)
            .deepening(deepening)
            .run()
            .expect("explores")
    };
    let deep = search(true);
    assert!(
        deep.violations
            .iter()
            .any(|f| f.invariant == "no-stale-frame"),
        "{:?}",
        deep.violations
    );
    assert!(!deep.exhaustive && deep.proved_bound.is_some_and(|k| k >= 1));
    // Without deepening, the same budget goes into one deep subtree and proves nothing.
    let flat = search(false);
    assert!(flat.violations.is_empty() && !flat.finished());
}
