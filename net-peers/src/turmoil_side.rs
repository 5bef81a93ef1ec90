//! The programs on turmoil 0.7 (`turmoil::net`, and the `unstable-fs` feature's tokio-shaped
//! `turmoil::fs::shim::tokio::fs`) over real tokio, and the harness that runs them.
//!
//! turmoil does not explore: each run is one simulation, its randomness (message latency, and
//! with `fail_rate` random partitions) drawn from `Builder::rng_seed`, and a crash happens only
//! where the harness calls `Sim::crash`. This harness is what a turmoil user would write: it
//! steps the simulation itself, and for the key-value store crashes `kv` at a step drawn
//! uniformly from the first [`CRASH_WINDOW`] steps and restarts it ([`Sim::bounce`]) 0 to
//! [`MAX_DOWNTIME`] steps later. A crash discards the host's unsynced file writes.

use std::time::SystemTime;

use turmoil::fs::shim::tokio::fs::{self, sync_dir, OpenOptions};
use turmoil::net::{TcpListener, TcpStream};
use turmoil::Sim;

include!("programs.rs");

/// Each step is 1 ms of simulated time (turmoil's default tick).
pub const TICK_MS: u64 = 1;
/// A message's latency: 0 to this, exponentially distributed (turmoil's default, set explicitly).
pub const MAX_LATENCY_MS: u64 = 100;
/// The probability that sending a message breaks its link (a random partition that drops the
/// link's messages in flight and those sent until it is repaired) — the counter only.
pub const FAIL_RATE: f64 = 0.05;
/// The probability that sending a message on a broken link repairs it first.
pub const REPAIR_RATE: f64 = 0.5;
/// A run longer than this in simulated time ends as a hang (turmoil's own limit; its default
/// is 10 s, lowered so that hung runs cost less).
pub const SIM_DURATION_MS: u64 = 5_000;
/// The key-value store's crash happens at a step drawn uniformly from 1..=CRASH_WINDOW (a
/// fault-free run takes about a third of that); if the client finishes first, there is none.
pub const CRASH_WINDOW: u64 = 300;
/// `kv` restarts 0..=MAX_DOWNTIME steps after its crash.
pub const MAX_DOWNTIME: u64 = 50;

/// How one simulation ended.
pub enum RunEnd {
    /// The client finished.
    Passed,
    /// The client's assertion failed: the bug.
    Bug,
    /// The simulation ran past its duration: the client waits for a reply that will not come.
    Hung,
    /// Any other error.
    Other(String),
}

fn sim<'a>(seed: u64, faults: bool) -> Sim<'a> {
    let mut builder = turmoil::Builder::new();
    builder
        .rng_seed(seed)
        .epoch(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        .tick_duration(Duration::from_millis(TICK_MS))
        .simulation_duration(Duration::from_millis(SIM_DURATION_MS))
        .max_message_latency(Duration::from_millis(MAX_LATENCY_MS));
    if faults {
        builder.fail_rate(FAIL_RATE).repair_rate(REPAIR_RATE);
    }
    builder.build()
}

/// One run of `program`, its randomness from `rng` (turmoil's seed, and the crash's step).
pub fn run(program: crate::Program, rng: &mut crate::measure::SplitMix) -> RunEnd {
    let seed = rng.next();
    let mut crash = None;
    let mut sim = match program {
        crate::Program::Kv => {
            let mut sim = sim(seed, false);
            sim.host("kv", || async {
                kv_server().await;
                Ok(())
            });
            sim.client("client", async {
                kv_client().await;
                Ok(())
            });
            let at = 1 + rng.below(CRASH_WINDOW);
            crash = Some((at, at + rng.below(MAX_DOWNTIME + 1)));
            sim
        }
        crate::Program::Counter { deadline } => {
            let mut sim = sim(seed, true);
            sim.host("counter", || async {
                counter_server().await;
                Ok(())
            });
            sim.client("client", async move {
                retrying_client(deadline.map(Duration::from_millis)).await;
                Ok(())
            });
            sim
        }
    };
    let mut step = 0;
    loop {
        step += 1;
        if let Some((crash_at, restart_at)) = crash {
            if step == crash_at {
                sim.crash("kv");
            }
            if step == restart_at {
                sim.bounce("kv");
            }
        }
        match sim.step() {
            Ok(true) => return RunEnd::Passed,
            Ok(false) => {}
            Err(e) => {
                let e = e.to_string();
                return if e.contains(crate::KV_LOST) || e.contains(crate::DOUBLE_APPLY) {
                    RunEnd::Bug
                } else if e.starts_with("Ran for duration") {
                    RunEnd::Hung
                } else {
                    RunEnd::Other(e)
                };
            }
        }
    }
}
