//! The broker over a real transport, under braid: the broker is the node `broker`, its session
//! store a file on its own disk (`FileStore`), c the test body, connected over TCP to
//! `broker:1883` through the front end. A crash kills the broker's tasks, resets c's
//! connection and decides what became of each unsynced write; the broker boots again from its
//! file, its publishers re-send what it had not taken, and c reconnects (a new connection
//! generation, so a bind). A network fault resets c's connection (or partitions the two hosts
//! for a while): c reconnects and takes its session over.
//!
//! c's log is the oracle: the ordering rules on every PUBLISH (a broken one panics), and, once
//! nothing can run, every message the broker took (persisted in flight) delivered. The clock
//! is paused (`clock_jumps(0)`): c's patience runs out only when nothing else can happen.
//!
//! Found: the bind race (`bind-race`) from c's reconnect after a crash; a publish lost by the
//! store that acknowledges before it syncs; and, with the fix (`bound-first`), a message lost
//! when a reset is followed by a crash: bind moves the persisted in-flight messages into the
//! queue, which is in memory, and removes them from the file before re-sending them. The fix
//! holds across a crash, and across a network fault.

use std::cell::Cell;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use braid::tokio::net::TcpListener;
use braid::tokio::{self as rt, time};
use braid::{node, Outcome};
use tokio_broker::sim::broker::{
    Broker, ClientLog, Config, Durability, FileStore, FrontEnd, Msg, MsgId, ObservedStore,
    SessionStore, TcpClient, Variant,
};

const PUBLISHERS: usize = 1;
const MESSAGES: usize = 2;
const ADDR: &str = "broker:1883";
/// How long c waits for its log to complete: with the clock paused, until nothing can run.
const PATIENCE: Duration = Duration::from_secs(3600);
/// Runs of a check that must hold: the default plan (10,000) takes about 1.5 s here, this many
/// about 7 s (300,000 held too, in about a minute each).
const HOLDS_RUNS: u64 = 50_000;

type Body = Pin<Box<dyn Future<Output = ()>>>;

/// Where replay files go (a check's name is its path below).
fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("braid_tcp")
}

/// One boot of the broker host (the `boot`th): its store from its disk, its publishers, its
/// front end.
async fn boot(variant: Variant, durability: Durability, log: Arc<Mutex<ClientLog>>, boot: u64) {
    // Each boot's connection generations start past the previous boot's.
    let first_generation = boot << 32 | 1;
    let store = FileStore::open("/", durability)
        .await
        .expect("the broker's disk");
    // What the file holds is the broker's already, synced or not (a publisher's re-send of a
    // message the broker holds would be deduplicated): its publishers do not re-send it.
    let on_disk = store.load_persisted_inflight().await;
    log.lock().unwrap().took(&on_disk);
    let broker = Broker::new(
        Config::new(variant),
        ObservedStore::new(store, log.clone(), first_generation),
    );
    for publisher in 1..=PUBLISHERS {
        let (broker, log) = (broker.clone(), log.clone());
        rt::spawn(async move {
            for seq in 1..=MESSAGES {
                let taken = log.lock().unwrap().has_taken(MsgId { publisher, seq });
                if !taken {
                    broker.route(Msg::new(publisher, seq)).await;
                }
            }
        });
    }
    let listener = TcpListener::bind("0.0.0.0:1883")
        .await
        .expect("the broker's port is free");
    FrontEnd::new(broker, first_generation)
        .serve(listener)
        .await;
}

/// The broker node and c, until c's log is complete.
fn scenario(
    variant: Variant,
    durability: Durability,
) -> impl Fn() -> Body + Clone + Send + Sync + 'static {
    move || {
        Box::pin(async move {
            let log = Arc::new(Mutex::new(ClientLog::new(PUBLISHERS * MESSAGES)));
            let l = log.clone();
            let boots = Rc::new(Cell::new(0));
            node::start("broker", move || {
                boots.set(boots.get() + 1);
                boot(variant, durability, l.clone(), boots.get())
            });
            let client = TcpClient::new(ADDR, log.clone());
            if time::timeout(PATIENCE, client.run()).await.is_err() {
                let log = log.lock().unwrap();
                let lost = log.undelivered();
                assert!(
                    lost.is_empty(),
                    "publish lost: {} taken by the broker (persisted in flight) and never \
                     delivered to c",
                    lost.iter()
                        .map(|id| id.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                panic!("c's log never completed: {log:?}");
            }
        })
    }
}

/// The strategy for the two races that need a crash at one moment among the fs calls' steps.
/// Measured (`BRAID_STRATEGY=.. BRAID_RUNS=60000 cargo test -p tokio-broker --test braid_tcp --
/// bind_race bound_first_loses`) once each fs call became a blocking task as in tokio (three
/// steps where it was one): PCT depth 3 finds them at runs 3,117 and 2,080; the default plan
/// found the bind race only at run 145,455 of 200,000 and the portfolio not within 60,000,
/// random and PCT depth 2 neither (issue 30, item 3: deep bugs by default). With the plan's
/// measured proportions (PCT depth 3 an eighth of its runs after the first 256), the bind race
/// is still not found within 60,000 runs with seeds 1 to 5, where PCT depth 3 alone finds it
/// at runs 3,117, 32,812, 7,753, 11,423 and 33,824; only depth 3 finds it (2, 4, 5 and 8 do
/// not within 60,000 with seed 1). The reset-then-crash loss is found by the plan at runs
/// 7,027, 23,563, 17,506, 3,899 and 7,283 (seeds 1 to 5), four of them by its PCT depth 3.
/// Since a caller's first look at an fs call's result became a step of its own (four steps a
/// call), PCT depth 3 finds the bind race at runs 19,171, 31,221 and 73,903 (seeds 1 to 3):
/// hence `DEEP_RUNS`.
const DEEP: braid::Strategy = braid::Strategy::Pct { depth: 3 };

/// The run budget of the searches with `DEEP` (each stops at its first failure).
const DEEP_RUNS: u64 = 100_000;

/// Finds the scenario failing with a message containing `says`, checks that its replay file
/// reproduces it, and prints what it took.
fn found(
    name: &str,
    says: &str,
    faults: impl Fn(braid::Check) -> braid::Check,
    body: impl Fn() -> Body + Clone + Send + Sync + 'static,
) -> braid::Failure {
    let started = Instant::now();
    let check = |c: braid::Check| faults(c.name(name).clock_jumps(0));
    let report = check(braid::check(body.clone()).out(out_dir())).run();
    let failure = match report.outcome {
        Outcome::Failed(f) => f,
        other => panic!("{name}: not found: {other:?}"),
    };
    eprintln!(
        "{name}: {} ({}; {} steps, {} preemptions; {:?})\n{}",
        failure.message,
        failure.found_by,
        failure.steps,
        failure.preemptions,
        started.elapsed(),
        failure.trace
    );
    assert!(
        failure.message.contains(says),
        "{name}: {}",
        failure.message
    );
    let file = failure.file.clone().expect("a replay file");
    let replayed = check(braid::check(body).replay(&file)).run();
    match &replayed.outcome {
        Outcome::Failed(f) => assert_eq!(f.message, failure.message, "{name}: replay"),
        other => panic!("{name}: the replay file did not reproduce it: {other:?}"),
    }
    *failure
}

/// The failing schedule's whole trace, with the notes of what each fault did (the failure's
/// own trace is abridged past 200 lines).
fn whole_trace(failure: &braid::Failure) -> String {
    failure
        .run_trace
        .as_ref()
        .expect("an explored failure has its trace")
        .render_text()
}

#[test]
fn bind_race_is_found_from_a_reconnect_after_a_crash() {
    let failure = found(
        "tcp-crash/bind-race",
        "delivered before the re-queued older",
        |c| c.crashes(1).strategy(DEEP).runs(DEEP_RUNS),
        scenario(Variant::BindRace, Durability::Synced),
    );
    assert!(
        whole_trace(&failure).contains("crash node broker"),
        "{}",
        failure.trace
    );
}

#[test]
fn bound_first_holds_across_a_crash() {
    let started = Instant::now();
    braid::check(scenario(Variant::BoundFirst, Durability::Synced))
        .name("tcp-crash/bound-first")
        .clock_jumps(0)
        .crashes(1)
        .runs(HOLDS_RUNS)
        .assert_holds();
    eprintln!("bound-first across a crash: {:?}", started.elapsed());
}

#[test]
fn bound_first_holds_across_a_network_fault() {
    let started = Instant::now();
    braid::check(scenario(Variant::BoundFirst, Durability::Synced))
        .name("tcp-reset/bound-first")
        .clock_jumps(0)
        .network_faults(1)
        .runs(HOLDS_RUNS)
        .assert_holds();
    eprintln!(
        "bound-first across a network fault: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_store_that_acks_before_sync_loses_a_publish_in_a_crash() {
    let failure = found(
        "tcp-crash/ack-before-sync",
        "publish lost",
        |c| c.crashes(1),
        scenario(Variant::BoundFirst, Durability::AckBeforeSync),
    );
    // The shrinker keeps the weakest fate of the unsynced write that still fails in the
    // schedule found: lost in some, torn in others (the default plan's, seed 1).
    let trace = whole_trace(&failure);
    assert!(
        trace.contains("to /inflight.log is lost") || trace.contains("to /inflight.log is torn"),
        "the crash lost or tore an unsynced write: {}",
        failure.trace
    );
}

/// The fix does not hold across a reset and then a crash: the reset makes c reconnect, that
/// connection's bind re-queues the message in flight (DUP) and removes it from the file, and
/// the crash comes before it is re-sent and persisted again, taking the in-memory queue with
/// it. After the restart nothing holds the message: c gets the newer one while still owed the
/// older. A finding about the broker's bind over an in-memory queue (the model's shape), not
/// about the bind race: with bind leaving the messages in the file until they are re-sent, the
/// same check held in 100,000 runs.
#[test]
fn bound_first_loses_what_bind_requeued_when_a_reset_is_followed_by_a_crash() {
    let failure = found(
        "tcp-reset-crash/bound-first",
        "delivered before the re-queued older",
        |c| {
            c.crashes(1)
                .network_faults(1)
                .strategy(DEEP)
                .runs(DEEP_RUNS)
        },
        scenario(Variant::BoundFirst, Durability::Synced),
    );
    let trace = whole_trace(&failure);
    let reset = trace.find("the connection is reset").expect("a reset");
    let crash = trace.find("crash node broker").expect("a crash");
    assert!(reset < crash, "the reset comes first: {trace}");
}
