//! The broker's acceptance table, both ways: each buggy variant is violated by exploration
//! (not a fixed schedule) under a fixed seed and budget, naming the expected invariant; each
//! fixed variant holds under the same budget with both strategies.

mod common;

use common::*;
use models::registry;
use sim::explore::Explorer;
use sim::strategy::{Reduction, Replay, StrategyKind};
use sim::{run_once, Model, RunConfig};

fn broker(variant: &str, publishers: usize, grain: &str) -> Box<dyn Model> {
    let params = serde_json::json!({ "publishers": publishers, "grain": grain });
    registry::build("broker", variant, &params).expect("valid broker")
}

#[test]
fn original_violates_delivery_order() {
    let model = broker("original", 1, "await");
    for strategy in STRATEGIES {
        assert_found(model.as_ref(), strategy, &["delivery-order"]);
    }
}

#[test]
fn gate_lane_deadlocks() {
    let model = broker("gate-lane", 1, "await");
    for strategy in STRATEGIES {
        assert_found(model.as_ref(), strategy, &["deadlock"]);
    }
}

#[test]
fn unbound_behind_holds_at_await_grain() {
    let model = broker("unbound-behind", 2, "await");
    for strategy in STRATEGIES {
        assert_holds(model.as_ref(), strategy);
    }
}

#[test]
fn bound_first_holds_at_await_grain() {
    let model = broker("bound-first", 2, "await");
    for strategy in STRATEGIES {
        assert_holds(model.as_ref(), strategy);
    }
}

/// braid's finding: with every atomic access a scheduling point, a router's behind() can load
/// count before bind's requeue and awaiting_bind after mark_bound, and take the lane.
#[test]
fn unbound_behind_violates_delivery_order_at_access_grain() {
    let model = broker("unbound-behind", 2, "access");
    assert_found(model.as_ref(), StrategyKind::Random, &["delivery-order"]);
}

#[test]
fn bound_first_holds_at_access_grain() {
    let model = broker("bound-first", 2, "access");
    for strategy in STRATEGIES {
        assert_holds(model.as_ref(), strategy);
    }
}

fn broker_2x2(variant: &str, grain: &str) -> Box<dyn Model> {
    let params = serde_json::json!({
        "publishers": 2,
        "messages": 2,
        "window": 2,
        "lane_capacity": 1,
        "inflight": 2,
        "grain": grain,
    });
    registry::build("broker", variant, &params).expect("valid broker")
}

fn dfs_2x2(model: &dyn Model, runs: Option<u64>) -> sim::explore::Summary {
    let mut explorer = Explorer::new(model)
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .stop_on_first(true);
    if let Some(runs) = runs {
        explorer = explorer.runs(runs);
    }
    explorer.run().unwrap()
}

/// The issue-13 finding: with two messages per publisher and a window of 2, a lane message that
/// arrives while drain_backlog is mid-drain (it checked the lane on entry) is overtaken by its
/// publisher's next message, queued behind `draining`. DFS finds it in bound-first; with the
/// same budget, drain-rechecks-lane (the lane re-checked under the queue's mutex before each
/// pop) holds. (Its full proof at this size is `braid explore
/// broker-drain-rechecks-lane-access-2x2 --strategy dfs`: minutes, not a unit test.)
#[test]
fn bound_first_breaks_order_at_2x2_and_drain_rechecks_lane_holds_on_the_same_budget() {
    let buggy = broker_2x2("bound-first", "access");
    let found = dfs_2x2(buggy.as_ref(), None);
    let names: Vec<&str> = found
        .violations
        .iter()
        .map(|f| f.invariant.as_str())
        .collect();
    assert_eq!(names, ["delivery-order"]);
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        record_accesses: false,
    };
    let shrunk = sim::shrink::shrink(buggy.as_ref(), &found.violations[0].run, &config).run;
    assert_one_minimal(buggy.as_ref(), &shrunk);

    let fixed = broker_2x2("drain-rechecks-lane", "access");
    let held = dfs_2x2(fixed.as_ref(), Some(found.runs));
    assert!(held.violations.is_empty(), "{:?}", held.violations);
    assert!(held.exhaustive || held.runs == found.runs);
}

/// Knocking the re-check out of drain-rechecks-lane is bound-first again: the same violation.
#[test]
fn drain_rechecks_lane_without_its_recheck_is_bound_first() {
    let params = serde_json::json!({ "publishers": 2, "messages": 2, "window": 2, "inflight": 2 });
    let mutant = registry::build_mutant(
        "broker",
        "drain-rechecks-lane",
        &params,
        Some("drain-lane-recheck"),
    )
    .expect("the variant has the guard");
    let found = dfs_2x2(mutant.as_ref(), None);
    assert_eq!(found.violations[0].invariant, "delivery-order");
    assert!(
        registry::build_mutant("broker", "bound-first", &params, Some("drain-lane-recheck"))
            .is_err()
    );
}

#[test]
fn bad_parameters_and_names_are_errors() {
    let err = |m: &str, v: &str, p: serde_json::Value| {
        registry::build(m, v, &p)
            .err()
            .expect("rejected")
            .to_string()
    };
    assert!(err("broker", "nope", serde_json::json!({})).contains("unknown variant 'nope'"));
    assert!(err("mqtt", "original", serde_json::json!({})).contains("unknown model 'mqtt'"));
    assert!(
        err("broker", "original", serde_json::json!({"publisher": 1})).contains("unknown field")
    );
    assert!(err("broker", "original", serde_json::json!({"window": 0})).contains("window"));
    assert!(
        err("broker", "original", serde_json::json!({"grain": "atoms"}))
            .contains("unknown variant")
    );
}

/// The bind race as a person reads it: the shortest failing schedule PCT finds with seed 1.
#[test]
fn bind_race_trace_snapshot() {
    let model = broker("original", 1, "await");
    let s = Explorer::new(model.as_ref())
        .strategy(StrategyKind::Pct { depth: 3 })
        .seed(1)
        .runs(2_000)
        .run()
        .unwrap();
    let found = s
        .violations
        .iter()
        .find(|f| f.invariant == "delivery-order")
        .expect("found");
    let config = RunConfig {
        max_steps: 10_000,
        trace: true,
        record_accesses: false,
    };
    let replay = Box::new(Replay::strict(found.run.decisions()));
    let r = run_once(model.as_ref(), replay, 0, &config).0;
    insta::assert_snapshot!(r.trace.unwrap().render_text());
}

fn shrunk_first_violation(
    model: &dyn Model,
    strategy: StrategyKind,
    invariant: &str,
) -> (sim::RunResult, sim::RunResult) {
    let s = explore(model, strategy, true);
    let found = s
        .violations
        .iter()
        .find(|f| f.invariant == invariant)
        .expect("found")
        .run
        .clone();
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        record_accesses: false,
    };
    let shrunk = sim::shrink::shrink(model, &found, &config).run;
    (found, shrunk)
}

/// Every remaining preemption is needed: removing any one of them makes the failure disappear.
fn assert_one_minimal(model: &dyn Model, shrunk: &sim::RunResult) {
    let invariant = &shrunk.violation().expect("still fails").invariant;
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        record_accesses: false,
    };
    for &step in &shrunk.preempted_steps {
        let switches = sim::shrink::without_preemption(&shrunk.decisions(), step);
        let r = run_once(
            model,
            Box::new(sim::strategy::Guided::new(switches)),
            0,
            &config,
        )
        .0;
        assert!(
            r.violation().is_none_or(|v| &v.invariant != invariant)
                || r.preemptions > shrunk.preemptions,
            "preemption at step {step} is not needed"
        );
    }
    // And the minimised schedule replays strictly to the same run.
    let again = run_once(
        model,
        Box::new(Replay::strict(shrunk.decisions())),
        0,
        &config,
    )
    .0;
    assert_eq!(again.digest, shrunk.digest);
}

#[test]
fn shrinking_is_one_minimal_and_the_bind_race_needs_one_preemption() {
    let model = broker("original", 1, "await");
    for strategy in [
        StrategyKind::Random,
        StrategyKind::Pct { depth: 3 },
        StrategyKind::Pos,
    ] {
        let (found, shrunk) = shrunk_first_violation(model.as_ref(), strategy, "delivery-order");
        assert!(shrunk.preemptions <= found.preemptions);
        // The reference's race: the publisher runs between register_session and bind (one
        // preemption); the lane going ahead of the drain is select!'s choice, not a preemption.
        assert_eq!(
            shrunk.preemptions,
            1,
            "{strategy:?}: {:?}",
            shrunk.decisions()
        );
        assert_one_minimal(model.as_ref(), &shrunk);
    }
    let access = broker("unbound-behind", 2, "access");
    let (found, shrunk) =
        shrunk_first_violation(access.as_ref(), StrategyKind::Random, "delivery-order");
    assert!(shrunk.preemptions < found.preemptions);
    assert_one_minimal(access.as_ref(), &shrunk);
    let gate = broker("gate-lane", 1, "await");
    let (_, shrunk) = shrunk_first_violation(gate.as_ref(), StrategyKind::Random, "deadlock");
    assert_one_minimal(gate.as_ref(), &shrunk);
}

/// Exhaustive search (sleep sets + source-set DPOR, no preemption bound) finds both single-publisher bugs
/// and covers the whole space.
#[test]
fn dfs_exhausts_the_single_publisher_scenarios_and_finds_their_bugs() {
    for (variant, invariant) in [("original", "delivery-order"), ("gate-lane", "deadlock")] {
        for reduction in [Reduction::PartialOrder, Reduction::VisitedStates] {
            let model = broker(variant, 1, "await");
            let s = Explorer::new(model.as_ref())
                .experimental_partial_order(true)
                .strategy(StrategyKind::Dfs {
                    preemption_bound: None,
                    reduction,
                })
                .run()
                .unwrap();
            let what = format!("{variant} {reduction:?}");
            assert!(s.exhaustive, "{what}: {} schedules", s.runs);
            assert!(s.pruned > 0, "{what}");
            let names: Vec<&str> = s.violations.iter().map(|f| f.invariant.as_str()).collect();
            assert_eq!(names, [invariant], "{what}");
        }
    }
}

/// The bounded reduction reaches every end state plain DFS reaches within the same bound, at the
/// grain where Bounded POR once did not (a task preempted right after its read lock, then
/// overtaken by the other publisher at a non-preemptive switch), and explores fewer schedules.
#[test]
fn bounded_reductions_reach_every_end_state_of_bounded_dfs() {
    let model = broker("bound-first", 2, "access");
    let dfs = |reduction| {
        Explorer::new(model.as_ref())
            .strategy(StrategyKind::Dfs {
                preemption_bound: Some(1),
                reduction,
            })
            .run()
            .unwrap()
    };
    let plain = dfs(Reduction::None);
    let por = dfs(Reduction::PartialOrder);
    let visited = dfs(Reduction::VisitedStates);
    for s in [&plain, &por, &visited] {
        assert!(s.finished() && s.violations.is_empty());
        assert_eq!(s.end_states, plain.end_states);
    }
    // POR is not offered (it missed end states on generated programs): asked for, the
    // search runs with visited states.
    assert_eq!(
        por.strategy,
        StrategyKind::Dfs {
            preemption_bound: Some(1),
            reduction: Reduction::VisitedStates
        }
    );
    assert!(
        visited.runs < plain.runs,
        "{} visited states, {} plain",
        visited.runs,
        plain.runs
    );
}

/// Without a preemption bound, DFS identifying states by value (the broker declares its state
/// visible, and names its loops' locals) reaches every end state and violation that sleep sets
/// with DPOR reach (plain DFS does not finish here), on the fix and on the bind race.
#[test]
fn value_states_reach_every_end_state_of_unbounded_dpor() {
    for variant in ["bound-first", "original"] {
        let model = broker(variant, 1, "await");
        assert!(model.state_visible());
        let dfs = |reduction| {
            Explorer::new(model.as_ref())
                .experimental_partial_order(true)
                .strategy(StrategyKind::Dfs {
                    preemption_bound: None,
                    reduction,
                })
                .run()
                .unwrap()
        };
        let dpor = dfs(Reduction::PartialOrder);
        let by_value = dfs(Reduction::VisitedStates);
        assert!(dpor.finished() && by_value.finished(), "{variant}");
        assert_eq!(by_value.end_states, dpor.end_states, "{variant}");
        let invariants = |s: &sim::explore::Summary| -> Vec<String> {
            s.violations.iter().map(|v| v.invariant.clone()).collect()
        };
        assert_eq!(invariants(&by_value), invariants(&dpor), "{variant}");
        assert!(
            by_value.runs * 10 < dpor.runs,
            "{variant}: {} by value, {} DPOR",
            by_value.runs,
            dpor.runs
        );
    }
}

/// The access-grain bind race needs 3 preemptions (DFS within 2 holds, within 3 finds it). A
/// random run's schedule is 1-minimal well above that; the bounded DFS below the count brings
/// it down to exactly 3 and proves that the minimum, and the result replays strictly to the
/// same invariant.
#[test]
fn shrinking_searches_below_one_minimal_down_to_the_bugs_depth() {
    use sim::shrink::{shrink_with, Minimality, ShrinkOptions};
    let s = scenario("broker-unbound-behind-access");
    let model = build(&s, None);
    let found = Explorer::new(model.as_ref())
        .strategy(StrategyKind::Random)
        .seed(6)
        .runs(BUDGET)
        .stop_on_first(true)
        .run()
        .expect("exploration runs")
        .violations
        .remove(0)
        .run;
    assert_eq!(found.violation().unwrap().invariant, "delivery-order");
    let config = RunConfig {
        max_steps: 10_000,
        trace: false,
        record_accesses: false,
    };
    // The guided passes alone stop above the bug's depth, and say so.
    let one = shrink_with(model.as_ref(), &found, &config, ShrinkOptions::ONE_MINIMAL);
    assert!(one.run.preemptions > 3, "{}", one.run.preemptions);
    assert_eq!(one.minimality, Minimality::OneMinimal);
    assert_one_minimal(model.as_ref(), &one.run);
    // With the search below (the run budget decides, not the generous time cap).
    let options = ShrinkOptions {
        runs: 2000,
        time: std::time::Duration::from_secs(600),
    };
    let shrunk = shrink_with(model.as_ref(), &found, &config, options);
    assert_eq!(shrunk.run.preemptions, 3, "{:?}", shrunk.run.decisions());
    assert_eq!(shrunk.minimality, Minimality::Minimum);
    assert!(!shrunk.timed_out);
    // The proof is the exhaustive search at bound 2.
    assert_eq!(shrunk.dfs_bounds.last(), Some(&2));
    assert_one_minimal(model.as_ref(), &shrunk.run);
    // Strict replay: the same run, the same invariant.
    let again = run_once(
        model.as_ref(),
        Box::new(Replay::strict(shrunk.run.decisions())),
        0,
        &config,
    )
    .0;
    assert_eq!(again.violation(), shrunk.run.violation());
    assert_eq!(again.violation().unwrap().invariant, "delivery-order");
    assert_eq!(again.preemptions, 3);
    assert_eq!(again.digest, shrunk.run.digest);
    // Deterministic: shrinking again gives the same schedule.
    let twice = shrink_with(model.as_ref(), &found, &config, options);
    assert_eq!(twice.run.digest, shrunk.run.digest);
    assert_eq!(twice.dfs_runs, shrunk.dfs_runs);
    // A budget too small for the proof leaves the count 1-minimal, never "minimum".
    let small = ShrinkOptions { runs: 5, ..options };
    let cut = shrink_with(model.as_ref(), &found, &config, small);
    assert!(cut.run.preemptions >= 3);
    assert_eq!(cut.minimality, Minimality::OneMinimal);
    assert!(!cut.timed_out);
}

/// The serve loop as a busy-poll (a plain await where it should park on the wake notify): once
/// everything is delivered it spins forever. A search by state must report that livelock, not
/// prove the model (it once said "exhaustive: 0 schedules, 15378 pruned — holds").
#[test]
fn a_busy_polling_handler_is_a_livelock_not_a_proof() {
    let params = serde_json::json!({ "publishers": 2, "grain": "access", "idle": "busy-poll" });
    let model = registry::build("broker", "bound-first", &params).expect("valid broker");
    let s = Explorer::new(model.as_ref())
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .run()
        .expect("explores");
    let found: Vec<&str> = s.violations.iter().map(|f| f.invariant.as_str()).collect();
    assert_eq!(found, ["livelock"], "{} runs", s.runs);
    assert!(s.violations[0].message.contains("handler:c"));
    // The parking handler, same search: proved, with end states.
    let parking = broker("bound-first", 2, "access");
    let s = Explorer::new(parking.as_ref())
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .run()
        .expect("explores");
    assert!(s.violations.is_empty() && s.exhaustive && !s.end_states.is_empty());
}

/// The serve loop as a spin-wait (a fair `yield_now` where it would park, ending once its
/// workload is on the wire): the right fix is proved over every fair schedule at 2 publishers,
/// as the parking handler is, and the bind race is still found, by every strategy.
#[test]
fn a_spin_waiting_handler_is_proved_fixed_and_its_race_found() {
    let params = serde_json::json!({ "publishers": 2, "grain": "access", "idle": "spin-wait" });
    let model = registry::build("broker", "bound-first", &params).expect("valid broker");
    let s = Explorer::new(model.as_ref())
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .run()
        .expect("explores");
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    assert!(s.exhaustive && s.yielded_fairly && !s.end_states.is_empty());
    assert_eq!(s.coverage(), "every fair schedule");

    let params = serde_json::json!({ "publishers": 1, "grain": "await", "idle": "spin-wait" });
    let original = registry::build("broker", "original", &params).expect("valid broker");
    for strategy in STRATEGIES
        .into_iter()
        .chain([StrategyKind::dfs(None), StrategyKind::Default])
    {
        assert_found(original.as_ref(), strategy, &["delivery-order"]);
    }
}
