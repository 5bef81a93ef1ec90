//! Gating in `cargo test` through the public library API only: a check built from a scenario
//! file, or from a model and variant, asserted to hold or to break a named invariant.

use models::registry;
use sim::check::Check;
use sim::strategy::StrategyKind;

#[test]
fn a_fixed_variant_holds_and_a_buggy_one_breaks_its_invariant() {
    registry::scenario_check("scenarios/broker-bound-first.toml")
        .expect("scenario loads")
        .runs(5_000)
        .assert_holds();
    registry::scenario_check("scenarios/broker-bind-race.toml")
        .expect("scenario loads")
        .runs(5_000)
        .assert_violates("delivery-order");
}

#[test]
fn a_model_and_variant_can_be_checked_directly() {
    let params = serde_json::json!({ "publishers": 1 });
    let model = registry::build("broker", "gate-lane", &params).expect("builds");
    Check::new(model)
        .strategy(StrategyKind::Random)
        .seed(7)
        .runs(5_000)
        .assert_violates("deadlock");
}

#[test]
#[should_panic(expected = "invariant delivery-order violated")]
fn a_broken_invariant_fails_the_test_with_its_name() {
    registry::scenario_check("scenarios/broker-bind-race.toml")
        .expect("scenario loads")
        .runs(5_000)
        .assert_holds();
}
