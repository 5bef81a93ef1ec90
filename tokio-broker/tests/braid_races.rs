//! The tokio-shaped broker under braid (the same source as under tokio, imports switched):
//! the bind race and the access-grain residual race are found, with replay files that
//! reproduce them; `bound-first` holds under the budget that finds them, and (ignored, slow)
//! for every schedule within one preemption, a bound within which both races are found.

use std::time::Instant;

use braid::{Grain, Outcome, Strategy};
use tokio_broker::sim::broker::{self, Config, Variant, Workload};

/// The restart scenario: c reconnects to a broker that restarted with `inflight` messages in
/// flight, while `publishers` publishers send `messages` each.
fn restart(variant: Variant, publishers: usize, messages: usize, inflight: usize) -> braid::Check {
    braid::check(move || async move {
        broker::restart(
            Config::new(variant),
            Workload::new(publishers, messages, inflight),
        )
        .await;
    })
    .name(&format!(
        "restart/{}/{publishers}x{messages}/inflight{inflight}",
        variant.name()
    ))
}

/// The preemption bound of the bounded proof (see below).
const BOUND: usize = 1;

fn out() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn bind_race_newer_message_before_the_requeued_one_is_found_and_replays() {
    let dir = out();
    let started = Instant::now();
    let report = restart(Variant::BindRace, 1, 1, 1).out(dir.path()).run();
    let failure = report.failure().expect("braid finds the bind race");
    assert!(
        failure
            .message
            .contains("newer message p1#1 delivered before the re-queued older restart#1"),
        "{}",
        failure.message
    );
    eprintln!(
        "bind-race: {} ({:?})\n{}",
        failure.message,
        started.elapsed(),
        failure.trace
    );
    let file = failure.file.clone().expect("a replay file");
    let again = restart(Variant::BindRace, 1, 1, 1).replay(&file).run();
    let replayed = again.failure().expect("the replay fails again");
    assert_eq!(replayed.message, failure.message);
    assert_eq!(replayed.trace, failure.trace);
}

#[test]
fn unbound_behind_access_grain_residual_race_is_found_and_replays() {
    let dir = out();
    let report = restart(Variant::UnboundBehind, 1, 1, 1)
        .out(dir.path())
        .runs(20_000)
        .run();
    let failure = report
        .failure()
        .expect("behind()'s separate loads race bind at access grain");
    assert!(
        failure
            .message
            .contains("delivered before the re-queued older"),
        "{}",
        failure.message
    );
    eprintln!(
        "unbound-behind (access): {}\n{}",
        failure.message, failure.trace
    );
    let file = failure.file.clone().expect("a replay file");
    let again = restart(Variant::UnboundBehind, 1, 1, 1).replay(&file).run();
    assert_eq!(again.failure().expect("fails again").trace, failure.trace);
}

#[test]
fn bound_first_holds_under_the_budget_that_finds_the_residual_race() {
    let report = restart(Variant::BoundFirst, 1, 1, 1).runs(20_000).run();
    eprintln!("bound-first 1x1: {:?}", report.outcome);
    assert!(
        matches!(report.outcome, Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
}

/// A bounded proof, and what it is worth. The store's lock is braid's under braid (every access
/// to what it guards is seen) and c's log, the test's oracle, is written before and read after
/// the broker's channel operations that order it; timers are reduced too, so DFS runs with the
/// reduction. Even so an unbounded search does not finish: 3,000,000 runs did not finish the
/// 1-preemption level (`BRAID_STRATEGY=dfs BRAID_RUNS=3000000`, 78 s). What multiplies it is
/// the serve loop's `select!`, whose starting branch is drawn anew at every poll (a `choose`
/// a state by trace keeps), ready branches or not. Within one preemption it does finish
/// (2,042,060 runs, about 50 s in release; 950,412 in 27 s before the store's lock was a step
/// and timers were reduced): bound-first holds for every such schedule and the same search
/// finds the bind race. It says nothing about the residual race, which needs more
/// preemptions: unbound-behind holds within one too (asserted, so that a change in what this
/// bound reaches is noticed). `cargo test --release -p tokio-broker --test braid_races --
/// --ignored`.
#[test]
#[ignore]
fn within_one_preemption_bound_first_holds_and_the_bind_race_is_found() {
    let search = |variant: Variant| {
        let started = Instant::now();
        let report = restart(variant, 1, 1, 1)
            .out(out().path())
            .strategy(Strategy::dfs(Some(BOUND)))
            .runs(10_000_000)
            .run();
        eprintln!(
            "{} 1x1 dfs bound {BOUND}: {:?} in {:?}",
            variant.name(),
            report.outcome,
            started.elapsed()
        );
        report.outcome
    };
    let holds_within_the_bound = |outcome: &Outcome| matches!(outcome, Outcome::Holds { coverage, .. } if coverage == "every schedule within 1 preemption");
    let bind_race = search(Variant::BindRace);
    assert!(
        matches!(&bind_race, Outcome::Failed(f) if f.message.contains("delivered before the re-queued older")),
        "{bind_race:?}"
    );
    let bound_first = search(Variant::BoundFirst);
    assert!(holds_within_the_bound(&bound_first), "{bound_first:?}");
    let unbound_behind = search(Variant::UnboundBehind);
    assert!(
        holds_within_the_bound(&unbound_behind),
        "{unbound_behind:?}"
    );
}

#[test]
fn unbound_behind_at_await_grain_is_not_a_proof() {
    // At await grain the shipped fix has no counterexample, but a coarse grain's "holds" is
    // cross-checked at access grain, which finds the residual race.
    let dir = out();
    let report = restart(Variant::UnboundBehind, 1, 1, 1)
        .grain(Grain::Await)
        .out(dir.path())
        .strategy(Strategy::dfs(None))
        .runs(1_000_000)
        .run();
    eprintln!("unbound-behind await-grain dfs: {:?}", report.outcome);
}

#[test]
fn gate_lane_deadlocks() {
    let dir = out();
    let report = restart(Variant::GateLane, 1, 1, 1).out(dir.path()).run();
    let failure = report.failure().expect("the naive fix deadlocks");
    eprintln!("gate-lane: {}", failure.message);
    assert!(
        failure.message.contains("no task can run"),
        "{}",
        failure.message
    );
}
