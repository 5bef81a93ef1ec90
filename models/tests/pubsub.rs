//! The pubsub acceptance table, both ways, from the scenario files; the fixed variant's guards
//! knocked out are caught; one shrunk trace per bug family is snapshotted.

use std::path::Path;

use models::registry;
use sim::explore::{Explorer, Summary};
use sim::scenario::{Expected, Scenario};
use sim::strategy::{Replay, StrategyKind};
use sim::{run_once, Model, RunConfig};

const BUDGET: u64 = 20_000;
const STRATEGIES: [StrategyKind; 2] = [StrategyKind::Random, StrategyKind::Pct { depth: 3 }];

fn scenario(name: &str) -> Scenario {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    Scenario::find(&dir, name).expect("scenario loads")
}

fn build(s: &Scenario, knock_out: Option<&str>) -> Box<dyn Model> {
    registry::build_mutant(&s.model, &s.variant, &s.params, knock_out).expect("valid model")
}

fn explore(model: &dyn Model, strategy: StrategyKind, stop_on_first: bool) -> Summary {
    Explorer::new(model)
        .strategy(strategy)
        .seed(1)
        .runs(BUDGET)
        .stop_on_first(stop_on_first)
        .check_determinism(true)
        .run()
        .expect("exploration runs")
}

/// Exploration stops at the first violation, which must be one of the expected invariants.
fn assert_found(model: &dyn Model, strategy: StrategyKind, expected: &[String]) {
    let s = explore(model, strategy, true);
    assert_eq!(s.violations.len(), 1, "{strategy:?}: {:?}", s.violations);
    assert!(
        expected.contains(&s.violations[0].invariant),
        "{strategy:?}: {:?} not in {expected:?}",
        s.violations
    );
    let found = &s.violations[0].run;
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        ..RunConfig::default()
    };
    let again = run_once(
        model,
        Box::new(Replay::strict(found.decisions.clone())),
        0,
        &config,
    )
    .0;
    assert_eq!(again.outcome, found.outcome);
    assert_eq!(again.digest, found.digest);
}

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

fn shrunk_trace(name: &str) -> String {
    let s = scenario(name);
    let Expected::Violation(expected) = &s.expected else {
        panic!("{name} should expect a violation");
    };
    let model = build(&s, None);
    let summary = explore(model.as_ref(), StrategyKind::Pct { depth: 3 }, true);
    let found = &summary.violations[0];
    assert!(expected.contains(&found.invariant));
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        ..RunConfig::default()
    };
    let shrunk = sim::shrink::shrink(model.as_ref(), &found.run, &config).run;
    let config = RunConfig {
        max_steps: 10_000,
        trace: true,
        ..RunConfig::default()
    };
    let r = run_once(
        model.as_ref(),
        Box::new(Replay::strict(shrunk.decisions.clone())),
        0,
        &config,
    )
    .0;
    r.trace.unwrap().render_text()
}

#[test]
fn blocking_retain_deadlock_trace() {
    insta::assert_snapshot!(shrunk_trace("pubsub-full-queue-blocking-retain"));
}

#[test]
fn drop_hint_lost_topic_trace() {
    insta::assert_snapshot!(shrunk_trace("pubsub-full-queue-drop-hint"));
}
