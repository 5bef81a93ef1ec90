//! The front door (issue 30, item 1): a user's test through `braid::check`, against the same
//! program under shuttle 0.9, in runs per CPU-second. Four programs:
//!
//! - `mutex_yields`: 2 tasks x 3 rounds of lock, yield, increment, unlock (std-shaped Mutex);
//! - `channel`: a bounded channel of 2, 2 producers x 5 messages, one consumer;
//! - `atomics`: 3 tasks x 2 rounds of fetch_add on one atomic, load and store of another;
//! - `handshake`: tokio-shaped, a Mutex, a Notify and a oneshot between two tasks and main
//!   (under shuttle as shuttle-tokio builds them: async tasks over its batch semaphore).
//!
//! braid runs each as a user test (`braid::check`, braid's `std` and `tokio` facades, stackful
//! tasks, reduction off: sampling); shuttle as threads (`check_random`-style `Runner`) or, for
//! the handshake, as futures. Both sides run the same number of runs with random and PCT
//! (depth 3) schedulers; every measurement is single-threaded, in alternation, 5 repetitions,
//! and the ratio printed is the median of the 5 per-repetition ratios of runs per CPU-second
//! (process CPU time, `CLOCK_PROCESS_CPUTIME_ID`).
//!
//! `cargo run --release -p peers --bin front_door -- [RUNS] [--only NAME] [--braid-only]`
//! (default 20,000 runs; `--braid-only` runs braid's side alone, for a profile).

use std::sync::Arc;

use braid::Strategy;
use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler};
use shuttle::{Config, Runner};

#[path = "../cpu_time.rs"]
mod cpu_time;
use cpu_time::cpu_seconds;

/// Which scheduler, on both sides.
#[derive(Clone, Copy)]
enum Sched {
    Random,
    Pct3,
}

impl Sched {
    fn name(self) -> &'static str {
        match self {
            Sched::Random => "random",
            Sched::Pct3 => "PCT d3",
        }
    }
}

/// One program on both sides.
struct Program {
    name: &'static str,
    braid: fn() -> braid::Check,
    shuttle: fn() -> Box<dyn Fn() + Send + Sync>,
}

mod braid_side {
    use super::*;
    use braid::std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use braid::std::sync::Mutex;

    pub fn mutex_yields() -> braid::Check {
        braid::check(|| async {
            let counter = Arc::new(Mutex::new(0u32));
            let tasks: Vec<_> = (0..2)
                .map(|_| {
                    let counter = counter.clone();
                    braid::spawn(async move {
                        for _ in 0..3 {
                            let mut guard = counter.lock().unwrap();
                            braid::task::yield_now().await;
                            *guard += 1;
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(*counter.lock().unwrap(), 6);
        })
    }

    pub fn channel() -> braid::Check {
        braid::check(|| async {
            let (tx, rx) = braid::sync::mpsc::channel(2);
            let producers: Vec<_> = (0..2u32)
                .map(|p| {
                    let tx = tx.clone();
                    braid::spawn(async move {
                        for i in 0..5 {
                            tx.send(p * 10 + i).await;
                        }
                    })
                })
                .collect();
            let mut sum = 0;
            for _ in 0..10 {
                sum += rx.recv().await;
            }
            for p in producers {
                p.await.unwrap();
            }
            assert_eq!(sum, 70);
        })
    }

    pub fn atomics() -> braid::Check {
        braid::check(|| async {
            let x = Arc::new(AtomicUsize::new(0));
            let y = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = (0..3)
                .map(|t| {
                    let (x, y) = (x.clone(), y.clone());
                    braid::spawn(async move {
                        for _ in 0..2 {
                            x.fetch_add(1, SeqCst);
                            let v = y.load(SeqCst);
                            y.store(v + t, SeqCst);
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(x.load(SeqCst), 6);
        })
    }

    pub fn handshake() -> braid::Check {
        use braid::tokio::sync::{oneshot, Mutex, Notify};
        braid::check(|| async {
            let state = Arc::new(Mutex::new(0u32));
            let notify = Arc::new(Notify::new());
            let (tx, rx) = oneshot::channel();
            let (s, n) = (state.clone(), notify.clone());
            let setter = braid::tokio::spawn(async move {
                *s.lock().await = 1;
                n.notify_one();
            });
            let (s, n) = (state.clone(), notify.clone());
            let reader = braid::tokio::spawn(async move {
                n.notified().await;
                let v = *s.lock().await;
                tx.send(v).unwrap();
            });
            assert_eq!(rx.await.unwrap(), 1);
            setter.await.unwrap();
            reader.await.unwrap();
        })
    }
}

mod shuttle_side {
    use super::*;
    use shuttle::future::batch_semaphore::{BatchSemaphore, Fairness};
    use shuttle::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use shuttle::sync::Mutex;
    use shuttle::thread;

    pub fn mutex_yields() -> Box<dyn Fn() + Send + Sync> {
        Box::new(|| {
            let counter = Arc::new(Mutex::new(0u32));
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let counter = counter.clone();
                    thread::spawn(move || {
                        for _ in 0..3 {
                            let mut guard = counter.lock().unwrap();
                            thread::yield_now();
                            *guard += 1;
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(*counter.lock().unwrap(), 6);
        })
    }

    pub fn channel() -> Box<dyn Fn() + Send + Sync> {
        Box::new(|| {
            let (tx, rx) = shuttle::sync::mpsc::sync_channel(2);
            let producers: Vec<_> = (0..2u32)
                .map(|p| {
                    let tx = tx.clone();
                    thread::spawn(move || {
                        for i in 0..5 {
                            tx.send(p * 10 + i).unwrap();
                        }
                    })
                })
                .collect();
            let mut sum = 0;
            for _ in 0..10 {
                sum += rx.recv().unwrap();
            }
            for p in producers {
                p.join().unwrap();
            }
            assert_eq!(sum, 70);
        })
    }

    pub fn atomics() -> Box<dyn Fn() + Send + Sync> {
        Box::new(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let y = Arc::new(AtomicUsize::new(0));
            let threads: Vec<_> = (0..3)
                .map(|t| {
                    let (x, y) = (x.clone(), y.clone());
                    thread::spawn(move || {
                        for _ in 0..2 {
                            x.fetch_add(1, SeqCst);
                            let v = y.load(SeqCst);
                            y.store(v + t, SeqCst);
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(x.load(SeqCst), 6);
        })
    }

    /// shuttle-tokio's shapes: a Mutex is a fair semaphore of 1 around the value, a Notify a
    /// semaphore of 0 (one stored permit), a oneshot a semaphore of 0 and a slot.
    pub fn handshake() -> Box<dyn Fn() + Send + Sync> {
        Box::new(|| {
            shuttle::future::block_on(async {
                let lock = Arc::new(BatchSemaphore::new(1, Fairness::StrictlyFair));
                let state = Arc::new(Mutex::new(0u32));
                let notify = Arc::new(BatchSemaphore::new(0, Fairness::StrictlyFair));
                let sent = Arc::new(BatchSemaphore::new(0, Fairness::StrictlyFair));
                let slot = Arc::new(Mutex::new(None));
                let (l, s, n) = (lock.clone(), state.clone(), notify.clone());
                let setter = shuttle::future::spawn(async move {
                    l.acquire(1).await.unwrap();
                    *s.lock().unwrap() = 1;
                    l.release(1);
                    n.release(1);
                });
                let (l, s, n) = (lock.clone(), state.clone(), notify.clone());
                let (tx_sem, tx_slot) = (sent.clone(), slot.clone());
                let reader = shuttle::future::spawn(async move {
                    n.acquire(1).await.unwrap();
                    l.acquire(1).await.unwrap();
                    let v = *s.lock().unwrap();
                    l.release(1);
                    *tx_slot.lock().unwrap() = Some(v);
                    tx_sem.release(1);
                });
                sent.acquire(1).await.unwrap();
                assert_eq!(slot.lock().unwrap().take(), Some(1));
                setter.await.unwrap();
                reader.await.unwrap();
            })
        })
    }
}

const PROGRAMS: [Program; 4] = [
    Program {
        name: "mutex_yields",
        braid: braid_side::mutex_yields,
        shuttle: shuttle_side::mutex_yields,
    },
    Program {
        name: "channel",
        braid: braid_side::channel,
        shuttle: shuttle_side::channel,
    },
    Program {
        name: "atomics",
        braid: braid_side::atomics,
        shuttle: shuttle_side::atomics,
    },
    Program {
        name: "handshake",
        braid: braid_side::handshake,
        shuttle: shuttle_side::handshake,
    },
];

/// Runs per CPU-second of `runs` runs of the program under braid.
fn braid_rate(program: &Program, sched: Sched, runs: u64) -> f64 {
    let strategy = match sched {
        Sched::Random => Strategy::Random,
        Sched::Pct3 => Strategy::Pct { depth: 3 },
    };
    let start = cpu_seconds();
    let report = (program.braid)()
        .strategy(strategy)
        .seed(1)
        .runs(runs)
        .run();
    let secs = cpu_seconds() - start;
    match report.outcome {
        braid::Outcome::Holds { runs: done, .. } => assert_eq!(done, runs, "{}", program.name),
        other => panic!("{}: {other:?}", program.name),
    }
    runs as f64 / secs
}

/// Runs per CPU-second of `runs` runs of the program under shuttle.
fn shuttle_rate(program: &Program, sched: Sched, runs: u64) -> f64 {
    let scheduler: Box<dyn Scheduler + Send> = match sched {
        Sched::Random => Box::new(RandomScheduler::new_from_seed(1, runs as usize)),
        Sched::Pct3 => Box::new(PctScheduler::new_from_seed(1, 3, runs as usize)),
    };
    let body = (program.shuttle)();
    let mut config = Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    let start = cpu_seconds();
    let done = Runner::new(scheduler, config).run(body);
    let secs = cpu_seconds() - start;
    assert_eq!(done as u64, runs, "{}", program.name);
    runs as f64 / secs
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = args
        .iter()
        .position(|a| a == "--only")
        .map(|i| args[i + 1].clone());
    let runs: u64 = args
        .iter()
        .find(|a| a.parse::<u64>().is_ok())
        .map_or(20_000, |a| a.parse().unwrap());
    if args.iter().any(|a| a == "--braid-only") {
        for program in PROGRAMS.iter() {
            if only.as_deref().is_none_or(|o| o == program.name) {
                for sched in [Sched::Random, Sched::Pct3] {
                    let rate = braid_rate(program, sched, runs);
                    println!("{:<14} {:<8} {rate:>14.0}", program.name, sched.name());
                }
            }
        }
        return;
    }
    println!(
        "{runs} runs each, seed 1, single-threaded, 5 alternating repetitions; runs per CPU-second"
    );
    println!(
        "{:<14} {:<8} {:>14} {:>14} {:>8}",
        "program", "strategy", "braid", "shuttle", "ratio"
    );
    for program in PROGRAMS.iter() {
        if only.as_deref().is_some_and(|o| o != program.name) {
            continue;
        }
        for sched in [Sched::Random, Sched::Pct3] {
            let (mut b, mut s, mut r) = (vec![], vec![], vec![]);
            for _ in 0..5 {
                let br = braid_rate(program, sched, runs);
                let sr = shuttle_rate(program, sched, runs);
                b.push(br);
                s.push(sr);
                r.push(br / sr);
            }
            println!(
                "{:<14} {:<8} {:>14.0} {:>14.0} {:>7.2}x",
                program.name,
                sched.name(),
                median(b),
                median(s),
                median(r)
            );
        }
    }
}
