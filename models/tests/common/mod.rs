//! What the model test suites share: loading scenarios, exploring them under the acceptance
//! budget, and asserting a violation (replayed byte for byte) or that every run holds.

#![allow(dead_code)] // each test binary uses its own subset

use std::fmt::Debug;
use std::path::Path;

use models::registry;
use sim::explore::{Explorer, Summary};
use sim::scenario::{Expected, Scenario};
use sim::strategy::{Replay, StrategyKind};
use sim::{run_once, Model, RunConfig};

pub const BUDGET: u64 = 20_000;
pub const STRATEGIES: [StrategyKind; 2] = [StrategyKind::Random, StrategyKind::Pct { depth: 3 }];

pub fn scenario(name: &str) -> Scenario {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    Scenario::find(&dir, name).expect("scenario loads")
}

pub fn build(s: &Scenario, knock_out: Option<&str>) -> Box<dyn Model> {
    registry::build_mutant(&s.model, &s.variant, &s.params, knock_out).expect("valid model")
}

pub fn explore(model: &dyn Model, strategy: StrategyKind, stop_on_first: bool) -> Summary {
    Explorer::new(model)
        .strategy(strategy)
        .seed(1)
        .runs(BUDGET)
        .stop_on_first(stop_on_first)
        .check_determinism(true)
        .run()
        .expect("exploration runs")
}

/// Exploration stops at the first violation, which must be one of the expected invariants, and
/// the failing run replays to the same violation, byte for byte.
pub fn assert_found<S: AsRef<str> + Debug>(
    model: &dyn Model,
    strategy: StrategyKind,
    expected: &[S],
) {
    let s = explore(model, strategy, true);
    assert_eq!(s.violations.len(), 1, "{strategy:?}: {:?}", s.violations);
    assert!(
        expected
            .iter()
            .any(|e| e.as_ref() == s.violations[0].invariant),
        "{strategy:?}: {:?} not in {expected:?}",
        s.violations
    );
    let found = &s.violations[0].run;
    let config = RunConfig {
        max_steps: 10_000,
        ..RunConfig::default()
    };
    let replay = Box::new(Replay::strict(found.decisions()));
    let again = run_once(model, replay, 0, &config).0;
    assert_eq!(again.outcome, found.outcome);
    assert_eq!(again.digest, found.digest);
}

/// Every run of the budget holds, over a real variety of schedules.
pub fn assert_holds(model: &dyn Model, strategy: StrategyKind) {
    let s = explore(model, strategy, false);
    assert!(s.violations.is_empty(), "{strategy:?}: {:?}", s.violations);
    assert_eq!(s.runs, BUDGET);
    assert!(
        s.distinct_schedules > 100,
        "explored {} schedules",
        s.distinct_schedules
    );
}

/// The minimised failing schedule PCT (depth 3, seed 1) finds for a scenario expected to
/// violate, replayed with its trace: what the snapshot tests pin.
pub fn shrunk_trace(name: &str) -> String {
    let s = scenario(name);
    let Expected::Violation(expected) = &s.expected else {
        panic!("{name} should expect a violation");
    };
    let model = build(&s, None);
    let summary = explore(model.as_ref(), StrategyKind::Pct { depth: 3 }, true);
    let found = summary
        .violations
        .iter()
        .find(|f| expected.contains(&f.invariant))
        .expect("found");
    let config = RunConfig {
        max_steps: 10_000,
        ..RunConfig::default()
    };
    let shrunk = sim::shrink::shrink(model.as_ref(), &found.run, &config).run;
    let config = RunConfig {
        trace: true,
        ..config
    };
    let replay = Box::new(Replay::strict(shrunk.decisions()));
    let r = run_once(model.as_ref(), replay, 0, &config).0;
    assert!(r
        .violation()
        .is_some_and(|v| expected.contains(&v.invariant)));
    r.trace.unwrap().render_text()
}
