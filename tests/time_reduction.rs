//! Reduction on user tests that use time (issue 30, item 2): generated programs whose tasks
//! sleep, race a lock against a timeout or a sleep (`select!`), read the clock and share
//! atomics and a mutex, run as
//! `braid::check` bodies with the default clock (one jump ahead of a task that can run). A
//! search by trace sees time's dependencies (every step that reads the time or changes the
//! timers accesses one object; a clock jump depends on every step), so these are reduced; DFS
//! with that reduction must reach exactly the outcomes plain DFS reaches (what each task read,
//! the clock included, and the final values) on every program whose plain search finishes;
//! within 0 and 1 preemptions, every outcome plain DFS within the bound reaches.
//! `BRAID_TIME_PROGRAMS` sets how many (from seed 1; default 120).

#[path = "support/reach.rs"]
mod reach;

use std::sync::Arc;
use std::time::Duration;

use braid::engine::strategy::Reduction;
use braid::std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use braid::tokio::sync::Mutex;
use braid::tokio::time::{sleep, timeout, Instant};
use braid::Strategy;
use rand::{Rng, SeedableRng};
use reach::{reach, Reached};

/// Plain DFS runs before a program counts as too big to compare.
const BUDGET: u64 = 4_000;

/// One statement of a task.
#[derive(Clone, Copy, Debug)]
enum Stmt {
    /// Sleeps this many milliseconds (0: still a timer, fired at the next advance).
    Sleep(u64),
    /// Stores a value into atomic `a`.
    Store(usize, usize),
    /// Adds one to atomic `a`.
    Add(usize),
    /// Reads atomic `a` (the value read is observed).
    Load(usize),
    /// Reads the clock (the milliseconds since the run began are observed).
    Now,
    /// Takes the mutex within this many milliseconds, adds one and holds it across a sleep of
    /// 1 ms (whether the lock came in time is observed).
    LockWithin(u64),
    /// A `select!` between a sleep of this many milliseconds and the mutex (the loser dropped:
    /// a cancelled timer, or a dropped lock future); which won is observed.
    SelectSleepLock(u64),
}

/// A generated program: two or three tasks of two to four statements.
#[derive(Clone, Debug)]
struct Program {
    seed: u64,
    tasks: Vec<Vec<Stmt>>,
}

fn generate(seed: u64) -> Program {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let tasks = (0..rng.gen_range(2..=3))
        .map(|_| {
            (0..rng.gen_range(2..=4))
                .map(|_| match rng.gen_range(0..7) {
                    0 => Stmt::Sleep(rng.gen_range(0..=2)),
                    1 => Stmt::Store(rng.gen_range(0..2), rng.gen_range(1..=2)),
                    2 => Stmt::Add(rng.gen_range(0..2)),
                    3 => Stmt::Load(rng.gen_range(0..2)),
                    4 => Stmt::Now,
                    5 => Stmt::LockWithin(rng.gen_range(0..=2)),
                    _ => Stmt::SelectSleepLock(rng.gen_range(0..=2)),
                })
                .collect()
        })
        .collect();
    Program { seed, tasks }
}

/// What a run reached: each task's observations, then the atomics and the mutex at the end.
type Outcome = (Vec<Vec<usize>>, Vec<usize>);

struct Shared {
    atomics: [AtomicUsize; 2],
    mutex: Mutex<usize>,
    start: Instant,
}

async fn run_task(shared: Arc<Shared>, stmts: Vec<Stmt>) -> Vec<usize> {
    let mut seen = Vec::new();
    for stmt in stmts {
        match stmt {
            Stmt::Sleep(ms) => sleep(Duration::from_millis(ms)).await,
            Stmt::Store(a, v) => shared.atomics[a].store(v, SeqCst),
            Stmt::Add(a) => {
                shared.atomics[a].fetch_add(1, SeqCst);
            }
            Stmt::Load(a) => seen.push(shared.atomics[a].load(SeqCst)),
            Stmt::Now => {
                seen.push(Instant::now().duration_since(shared.start).as_millis() as usize)
            }
            Stmt::LockWithin(ms) => {
                match timeout(Duration::from_millis(ms), shared.mutex.lock()).await {
                    Ok(mut guard) => {
                        *guard += 1;
                        sleep(Duration::from_millis(1)).await;
                        seen.push(1);
                    }
                    Err(_) => seen.push(0),
                }
            }
            Stmt::SelectSleepLock(ms) => {
                braid::tokio::select! {
                    _ = sleep(Duration::from_millis(ms)) => seen.push(0),
                    mut guard = shared.mutex.lock() => {
                        *guard += 1;
                        seen.push(1);
                    }
                }
            }
        }
    }
    seen
}

async fn run(program: Arc<Program>) -> Outcome {
    let shared = Arc::new(Shared {
        atomics: [AtomicUsize::new(0), AtomicUsize::new(0)],
        mutex: Mutex::new(0),
        start: Instant::now(),
    });
    let handles: Vec<_> = program
        .tasks
        .iter()
        .map(|stmts| braid::spawn(run_task(shared.clone(), stmts.clone())))
        .collect();
    let mut seen = Vec::new();
    for h in handles {
        seen.push(h.await.unwrap());
    }
    let finals = vec![
        shared.atomics[0].load(SeqCst),
        shared.atomics[1].load(SeqCst),
        *shared.mutex.lock().await,
    ];
    (seen, finals)
}

fn search(program: &Arc<Program>, reduction: Reduction) -> Reached<Outcome> {
    search_within(program, None, reduction)
}

fn search_within(
    program: &Arc<Program>,
    preemption_bound: Option<usize>,
    reduction: Reduction,
) -> Reached<Outcome> {
    let p = program.clone();
    let strategy = Strategy::Dfs {
        preemption_bound,
        reduction,
    };
    reach(
        &format!("time {}", program.seed),
        strategy,
        BUDGET,
        move || run(p.clone()),
    )
}

#[test]
fn reduced_dfs_with_timers_reaches_what_plain_dfs_reaches() {
    let programs: u64 = std::env::var("BRAID_TIME_PROGRAMS").map_or(120, |s| s.parse().unwrap());
    let (mut compared, mut plain_runs, mut reduced_runs) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for seed in 1..=programs {
        let program = Arc::new(generate(seed));
        let plain = search(&program, Reduction::None);
        if !plain.finished {
            continue;
        }
        let reduced = search(&program, Reduction::VisitedStates);
        compared += 1;
        if let Some(how) = reduced.differs_from_plain(&plain) {
            mismatches.push(format!("seed {seed}: {how}\n{program:?}"));
            continue;
        }
        plain_runs += plain.runs;
        reduced_runs += reduced.runs;
        // Within a bound (the default plan's first levels; a clock jump counts as a
        // preemption): everything plain DFS reaches, and nothing no schedule reaches. (A reduced
        // bounded search may reach more than the plain one within the same bound: it counts
        // preemptions along the path it took to a state.)
        for bound in [0, 1] {
            let plain_within = search_within(&program, Some(bound), Reduction::None);
            let reduced_within = search_within(&program, Some(bound), Reduction::VisitedStates);
            let missed: Vec<_> = plain_within
                .outcomes
                .difference(&reduced_within.outcomes)
                .collect();
            let unreal: Vec<_> = reduced_within
                .outcomes
                .difference(&plain.outcomes)
                .collect();
            if !missed.is_empty() || !unreal.is_empty() || !reduced_within.finished {
                mismatches.push(format!(
                    "seed {seed}, bound {bound}: missed {missed:?}, unreal {unreal:?}, finished {}",
                    reduced_within.finished
                ));
            }
        }
    }
    eprintln!(
        "time: {compared} programs compared, {reduced_runs} reduced runs against {plain_runs} plain"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(
        compared >= programs / 4,
        "only {compared} programs compared"
    );
    assert!(
        reduced_runs * 2 < plain_runs,
        "{reduced_runs} >= half of {plain_runs}: little reduced"
    );
}
