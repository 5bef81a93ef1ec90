//! Exhaustive search of one small program on std-shaped atomics, braid against loom (issue 30,
//! item 2: reduction on user tests). Three tasks (threads, under loom) share two atomics; each
//! does `ROUNDS` rounds of a `fetch_add` on one, a `load` of the other and a `store` back, all
//! SeqCst; at the end the test asserts what every schedule gives (x was added to 3 * ROUNDS
//! times, so it is at least that). Braid's user test (`braid::check`, `braid::std` atomics) is
//! searched by plain DFS and by DFS with the reduction a user test gets by default (visited
//! states); loom's model by `loom::model`. Printed: schedules (executions) and CPU seconds.
//!
//! Each search is also run within 2 preemptions (loom's `preemption_bound`). loom's unbounded
//! search is cut after `CAP` seconds, with the executions it had made.
//!
//! `cargo run --release -p peers --bin atomics -- [ROUNDS]` (default 1).

use std::sync::atomic::{AtomicU64, Ordering::SeqCst as Seq};
use std::sync::Arc;
use std::time::Instant;

use braid::engine::strategy::Reduction;
use braid::{Outcome, Strategy};

fn rounds() -> usize {
    std::env::args()
        .nth(1)
        .map_or(1, |s| s.parse().expect("ROUNDS"))
}

/// The test under braid: `braid::std::sync::atomic` in place of std's.
fn braid_side(bound: Option<usize>, reduction: Reduction) -> (u64, f64) {
    use braid::std::sync::atomic::AtomicUsize;
    let rounds = rounds();
    let start = Instant::now();
    let report = braid::check(move || async move {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..3)
            .map(|t| {
                let (x, y) = (x.clone(), y.clone());
                braid::spawn(async move {
                    for _ in 0..rounds {
                        x.fetch_add(1, Seq);
                        let v = y.load(Seq);
                        y.store(v + t, Seq);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert!(x.load(Seq) >= 3 * rounds);
    })
    .strategy(Strategy::Dfs {
        preemption_bound: bound,
        reduction,
    })
    .runs(u64::MAX / 2)
    .run();
    let runs = match report.outcome {
        Outcome::Holds { runs, .. } => runs,
        other => panic!("{other:?}"),
    };
    (runs, start.elapsed().as_secs_f64())
}

/// The same program under loom.
fn loom_side(bound: Option<usize>) -> (u64, f64) {
    let rounds = rounds();
    let executions = Arc::new(AtomicU64::new(0));
    let e = executions.clone();
    let start = Instant::now();
    if bound.is_none() {
        // loom's unbounded search may not end: say how far it got at the cap.
        let e = executions.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(CAP));
            println!(
                "{:<34} {:>12} {:>10} (cut: not finished)",
                "loom::model (executions)",
                e.load(Seq),
                CAP
            );
            std::process::exit(0);
        });
    }
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    builder.check(move || {
        use loom::sync::atomic::AtomicUsize;
        e.fetch_add(1, Seq);
        let x = loom::sync::Arc::new(AtomicUsize::new(0));
        let y = loom::sync::Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..3)
            .map(|t| {
                let (x, y) = (x.clone(), y.clone());
                loom::thread::spawn(move || {
                    for _ in 0..rounds {
                        x.fetch_add(1, Seq);
                        let v = y.load(Seq);
                        y.store(v + t, Seq);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(x.load(Seq) >= 3 * rounds);
    });
    (executions.load(Seq), start.elapsed().as_secs_f64())
}

/// Seconds loom's unbounded search may take.
const CAP: u64 = 300;

fn main() {
    println!(
        "3 tasks x {} rounds of fetch_add, load, store (SeqCst)",
        rounds()
    );
    println!("{:<34} {:>12} {:>10}", "search", "schedules", "seconds");
    for bound in [Some(2), None] {
        let within = bound.map_or(String::new(), |b| format!(", PB {b}"));
        for (name, reduction) in [
            ("braid DFS, plain", Reduction::None),
            ("braid DFS, visited states", Reduction::VisitedStates),
        ] {
            let (runs, secs) = braid_side(bound, reduction);
            let name = format!("{name}{within}");
            println!("{name:<34} {runs:>12} {secs:>10.2}");
        }
        let (runs, secs) = loom_side(bound);
        let name = format!("loom executions{within}");
        println!("{name:<34} {runs:>12} {secs:>10.2}");
    }
}
