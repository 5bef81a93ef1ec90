//! A publisher whose lane `reserve()` times out falls back to the queue while another
//! publisher gets the permit: `timeout(patience, lane.reserve())` in the router, a client that
//! acks as slowly as the router's patience, virtual time. braid explores both outcomes of the
//! race between the timeout and the permit (timers due at the same instant fire in an order
//! the strategy picks) and checks c's ordering rules in every schedule.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use braid::{Outcome, Strategy};
use tokio_broker::sim::broker::{self, Config, LaneWait, Route, Variant, Workload};

static ROUTES: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static RUNS: AtomicU64 = AtomicU64::new(0);
/// Runs in which one publisher's reserve() timed out (hand-off) while another's got a permit.
static MIXED: AtomicU64 = AtomicU64::new(0);

fn lane_timeout(variant: Variant) -> braid::Check {
    braid::check(move || async move {
        let mut config = Config::new(variant);
        // c acks 5 ms after each PUBLISH; the publishers publish at 1 ms, 2 ms; a router
        // waits 4 ms for a lane permit: the first publish's timeout and c's first ack are both
        // due at 5 ms.
        config.lane_wait = LaneWait::Reserve(Duration::from_millis(4));
        let mut workload = Workload::new(2, 2, 1);
        workload.ack_delay = Duration::from_millis(5);
        workload.publish_interval = Duration::from_millis(1);
        let log = broker::restart(config, workload).await;
        let log = log.lock().unwrap();
        RUNS.fetch_add(1, Relaxed);
        let handed_off = |p| {
            log.routes
                .iter()
                .any(|(id, r)| id.publisher == p && *r == Route::HandOff)
        };
        let laned = |p| {
            log.routes
                .iter()
                .any(|(id, r)| id.publisher == p && *r == Route::Lane)
        };
        for (_, r) in &log.routes {
            ROUTES[*r as usize].fetch_add(1, Relaxed);
        }
        if (handed_off(1) && laned(2)) || (handed_off(2) && laned(1)) {
            MIXED.fetch_add(1, Relaxed);
        }
    })
    .name(&format!("lane-timeout/{}", variant.name()))
}

#[test]
fn a_reserve_timeout_falls_back_to_the_queue_and_order_holds() {
    let started = Instant::now();
    let report = lane_timeout(Variant::BoundFirst)
        .strategy(Strategy::Random)
        .runs(3_000)
        .run();
    let (runs, mixed) = (RUNS.load(Relaxed), MIXED.load(Relaxed));
    eprintln!(
        "lane-timeout/bound-first: {:?}; {mixed} of {runs} runs had one publisher time out \
         into the queue while the other got a permit ({:?})",
        report.outcome,
        started.elapsed()
    );
    eprintln!("routes offline/behind/lane/hand-off: {:?}", ROUTES);
    assert!(
        matches!(report.outcome, Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
    assert!(mixed > 0, "the timeout-and-permit race was never explored");
}
