//! loom's own model tests (loom 0.7.3's `tests/`, from the crate the registry serves), each
//! ported to braid in `tests/loom_ports.rs` (issue 30, item 2), timed: loom's original model
//! (copied here from the registry file, run by `loom::model` as loom's test does) against
//! braid's port (the same body `tests/loom_ports.rs` proves, searched by unbounded DFS with the
//! default reduction, visited states, and no run budget: the proof a user asks for with
//! `strategy = "dfs"`, without the deepening levels a budget brings). Counted: loom's executions (a counter bumped in the
//! model closure) and braid's schedules (the `runs` of `Outcome::Holds`). Wall seconds, one
//! thread each. A test that is `#[should_panic]` in loom shows the executions until its
//! failure. Of `atomic_int.rs`'s ten integer widths the `usize` module is timed (the others
//! are the same single-threaded bodies).
//!
//! loom's `LOOM_MAX_PREEMPTIONS` is left unset (no preemption bound) except where loom's test
//! sets its own (`spec.rs::test_seq_cst`: `preemption_bound = Some(1)`).
//!
//! `cargo run --release -p peers --bin loom_tests` (`LOOM_TESTS_PANICS=1`: print the panics of
//! the failures found).

use std::collections::HashSet;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{
    AtomicU64,
    Ordering::{self, Acquire, Relaxed, Release, SeqCst},
};
use std::sync::Arc;
use std::time::Instant;

use braid::engine::strategy::Reduction;
use braid::{Outcome, Strategy};

#[allow(dead_code)]
#[path = "../../../tests/loom_ports/bodies.rs"]
mod bodies;

/// A count and its seconds, or the count at a failure.
struct Timed {
    count: u64,
    failed: bool,
    secs: f64,
}

impl Timed {
    fn count(&self) -> String {
        if self.failed {
            format!("fails at {}", self.count)
        } else {
            self.count.to_string()
        }
    }
}

/// loom's model of `f`, with `preemption_bound` as loom's test sets it.
fn loom_with(bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) -> Timed {
    let executions = Arc::new(AtomicU64::new(0));
    let e = executions.clone();
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(move || {
        let mut builder = loom::model::Builder::new();
        if bound.is_some() {
            builder.preemption_bound = bound;
        }
        builder.check(move || {
            e.fetch_add(1, SeqCst);
            f();
        })
    }));
    Timed {
        count: executions.load(SeqCst),
        failed: result.is_err(),
        secs: start.elapsed().as_secs_f64(),
    }
}

/// `loom::model(f)`.
fn loom(f: impl Fn() + Sync + Send + 'static) -> Timed {
    loom_with(None, f)
}

/// braid's port, as `tests/loom_ports.rs` searches it.
fn braid_port<F, Fut>(body: F) -> Timed
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let start = Instant::now();
    let report = braid::check(body)
        .strategy(Strategy::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .run();
    let secs = start.elapsed().as_secs_f64();
    match report.outcome {
        Outcome::Holds {
            runs,
            exhaustive: true,
            ..
        } => Timed {
            count: runs,
            failed: false,
            secs,
        },
        Outcome::Failed(_) => Timed {
            count: 0,
            failed: true,
            secs,
        },
        other => panic!("{other:?}"),
    }
}

/// Seconds on each side over the rows where both prove, and where both fail (braid's failures
/// include shrinking the schedule and writing its replay file and trace), for the total lines.
static PROVED: std::sync::Mutex<(f64, f64, usize)> = std::sync::Mutex::new((0.0, 0.0, 0));
static FAILED: std::sync::Mutex<(f64, f64, usize)> = std::sync::Mutex::new((0.0, 0.0, 0));

fn row(name: &str, loom: Timed, braid: Timed) {
    if loom.failed == braid.failed {
        let mut t = match braid.failed {
            true => FAILED.lock().unwrap(),
            false => PROVED.lock().unwrap(),
        };
        *t = (t.0 + loom.secs, t.1 + braid.secs, t.2 + 1);
    }
    let braid_count = if braid.failed {
        "fails".to_string()
    } else {
        braid.count()
    };
    println!(
        "| {name} | {} | {:.3} | {braid_count} | {:.3} |",
        loom.count(),
        loom.secs,
        braid.secs
    );
}

// ---- loom's originals, copied from loom 0.7.3's tests ----

mod loom_tests {
    use super::*;
    use loom::sync::atomic::{AtomicBool, AtomicUsize};
    use loom::sync::{Mutex, RwLock, TryLockResult};
    use loom::thread;
    use std::sync::TryLockError;

    pub fn fetch_add_atomic() {
        let a1 = Arc::new(AtomicUsize::new(0));
        let a2 = a1.clone();

        let th = thread::spawn(move || a2.fetch_add(1, Relaxed));

        let v1 = a1.fetch_add(1, Relaxed);
        let v2 = th.join().unwrap();

        assert_ne!(v1, v2);
    }

    const NUM_A: u64 = 11641914933775430211;
    const NUM_B: u64 = 13209405719799650717;

    pub fn xor() {
        let a: usize = NUM_A as usize;
        let b: usize = NUM_B as usize;

        let atomic = AtomicUsize::new(a);
        let prev = atomic.fetch_xor(b, SeqCst);

        assert_eq!(a, prev, "prev did not match");
        assert_eq!(a ^ b, atomic.load(SeqCst), "load failed");
    }

    pub fn max() {
        let a: usize = NUM_A as usize;
        let b: usize = NUM_B as usize;

        let atomic = AtomicUsize::new(a);
        let prev = atomic.fetch_max(b, SeqCst);

        assert_eq!(a, prev, "prev did not match");
        assert_eq!(a.max(b), atomic.load(SeqCst), "load failed");
    }

    pub fn min() {
        let a: usize = NUM_A as usize;
        let b: usize = NUM_B as usize;

        let atomic = AtomicUsize::new(a);
        let prev = atomic.fetch_min(b, SeqCst);

        assert_eq!(a, prev, "prev did not match");
        assert_eq!(a.min(b), atomic.load(SeqCst), "load failed");
    }

    pub fn compare_exchange() {
        let a: usize = NUM_A as usize;
        let b: usize = NUM_B as usize;

        let atomic = AtomicUsize::new(a);
        assert_eq!(Err(a), atomic.compare_exchange(b, a, SeqCst, SeqCst));
        assert_eq!(Ok(a), atomic.compare_exchange(a, b, SeqCst, SeqCst));

        assert_eq!(b, atomic.load(SeqCst));
    }

    pub fn fetch_update() {
        let a: usize = NUM_A as usize;
        let b: usize = NUM_B as usize;

        let atomic = AtomicUsize::new(a);
        assert_eq!(Ok(a), atomic.fetch_update(SeqCst, SeqCst, |_| Some(b)));
        assert_eq!(Err(b), atomic.fetch_update(SeqCst, SeqCst, |_| None));
        assert_eq!(b, atomic.load(SeqCst));
    }

    #[allow(deprecated)]
    pub fn compare_and_swap() {
        let num = Arc::new(AtomicUsize::new(0));

        let ths: Vec<_> = (0..2)
            .map(|_| {
                let num = num.clone();

                thread::spawn(move || {
                    let mut curr = num.load(Relaxed);

                    loop {
                        let actual = num.compare_and_swap(curr, curr + 1, Relaxed);

                        if actual == curr {
                            return;
                        }

                        curr = actual;
                    }
                })
            })
            .collect();

        for th in ths {
            th.join().unwrap();
        }

        assert_eq!(2, num.load(Relaxed));
    }

    pub fn check_ordering_valid() {
        let n1 = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        let n2 = n1.clone();

        thread::spawn(move || {
            n1.0.store(1, Relaxed);
            n1.1.store(1, Release);
        });

        if 1 == n2.1.load(Acquire) {
            assert_eq!(1, n2.0.load(Relaxed));
        }
    }

    pub fn two_mutexes_deadlock() {
        let a = Rc::new(Mutex::new(1));
        let b = Rc::new(Mutex::new(2));

        let th1 = {
            let a = a.clone();
            let b = b.clone();

            thread::spawn(move || {
                let a_lock = a.lock().unwrap();
                let b_lock = b.lock().unwrap();
                assert_eq!(*a_lock + *b_lock, 3);
            })
        };
        let th2 = {
            thread::spawn(move || {
                let b_lock = b.lock().unwrap();
                let a_lock = a.lock().unwrap();
                assert_eq!(*a_lock + *b_lock, 3);
            })
        };
        th1.join().unwrap();
        th2.join().unwrap();
    }

    pub fn mutex_enforces_mutual_exclusion() {
        let data = Rc::new((Mutex::new(0), AtomicUsize::new(0)));

        let ths: Vec<_> = (0..2)
            .map(|_| {
                let data = data.clone();

                thread::spawn(move || {
                    let mut locked = data.0.lock().unwrap();

                    let prev = data.1.fetch_add(1, SeqCst);
                    assert_eq!(prev, *locked);
                    *locked += 1;
                })
            })
            .collect();

        for th in ths {
            th.join().unwrap();
        }

        let locked = data.0.lock().unwrap();

        assert_eq!(*locked, data.1.load(SeqCst));
    }

    pub fn rwlock_read_one() {
        let lock = Arc::new(RwLock::new(1));
        let c_lock = lock.clone();

        let n = lock.read().unwrap();
        assert_eq!(*n, 1);

        thread::spawn(move || {
            let r = c_lock.read();
            assert!(r.is_ok());
        })
        .join()
        .unwrap();
    }

    pub fn rwlock_read_two_write_one() {
        let lock = Arc::new(RwLock::new(1));

        for _ in 0..2 {
            let lock = lock.clone();

            thread::spawn(move || {
                let _l = lock.read().unwrap();

                thread::yield_now();
            });
        }

        let _l = lock.write().unwrap();
        thread::yield_now();
    }

    pub fn rwlock_write_three() {
        let lock = Arc::new(RwLock::new(1));

        for _ in 0..2 {
            let lock = lock.clone();
            thread::spawn(move || {
                let _l = lock.write().unwrap();

                thread::yield_now();
            });
        }

        let _l = lock.write().unwrap();
        thread::yield_now();
    }

    pub fn rwlock_write_then_try_write() {
        let lock = Arc::new(RwLock::new(1));

        let _l1 = lock.write().unwrap();

        assert!(matches!(
            lock.try_write(),
            TryLockResult::Err(TryLockError::WouldBlock)
        ));
    }

    pub fn rwlock_write_then_try_read() {
        let lock = Arc::new(RwLock::new(1));

        let _l1 = lock.write().unwrap();

        assert!(matches!(
            lock.try_read(),
            TryLockResult::Err(TryLockError::WouldBlock)
        ));
    }

    pub fn rwlock_read_then_try_write() {
        let lock = Arc::new(RwLock::new(1));

        let _l1 = lock.write().unwrap();

        assert!(matches!(
            lock.try_write(),
            TryLockResult::Err(TryLockError::WouldBlock)
        ));
    }

    pub fn rwlock_try_read() {
        let lock = RwLock::new(1);

        match lock.try_read() {
            Ok(n) => assert_eq!(*n, 1),
            Err(_) => unreachable!(),
        };
    }

    pub fn rwlock_write() {
        let lock = RwLock::new(1);

        let mut n = lock.write().unwrap();
        *n = 2;

        assert!(lock.try_read().is_err());
    }

    pub fn rwlock_try_write() {
        let lock = RwLock::new(1);

        let n = lock.read().unwrap();
        assert_eq!(*n, 1);

        assert!(lock.try_write().is_err());
    }

    pub fn rwlock_into_inner() {
        let lock = Rc::new(RwLock::new(0));

        let ths: Vec<_> = (0..2)
            .map(|_| {
                let lock = lock.clone();

                thread::spawn(move || {
                    *lock.write().unwrap() += 1;
                })
            })
            .collect();

        for th in ths {
            th.join().unwrap();
        }

        let lock = Rc::try_unwrap(lock).unwrap().into_inner().unwrap();
        assert_eq!(lock, 2);
    }

    pub fn rwlock_two_writers() {
        let lock = Arc::new(RwLock::new(1));
        let c_lock = lock.clone();
        let c_lock2 = lock;

        let atomic = Arc::new(AtomicUsize::new(0));
        let c_atomic = atomic.clone();
        let c_atomic2 = atomic;

        thread::spawn(move || {
            let mut w = c_lock.write().unwrap();
            *w += 1;
            c_atomic.fetch_add(1, Ordering::Relaxed);
        });

        thread::spawn(move || {
            let mut w = c_lock2.write().unwrap();
            *w += 1;
            c_atomic2.fetch_add(1, Ordering::Relaxed);
        });
    }

    pub fn yield_completes() {
        let inc = Arc::new(AtomicUsize::new(0));

        {
            let inc = inc.clone();
            thread::spawn(move || {
                inc.store(1, Relaxed);
            });
        }

        loop {
            if 1 == inc.load(Relaxed) {
                return;
            }

            loom::thread::yield_now();
        }
    }

    struct BuggyInc {
        num: AtomicUsize,
    }

    impl BuggyInc {
        fn new() -> BuggyInc {
            BuggyInc {
                num: AtomicUsize::new(0),
            }
        }

        fn inc(&self) {
            let curr = self.num.load(Acquire);
            self.num.store(curr + 1, Release);
        }
    }

    pub fn checks_fail() {
        let buggy_inc = Arc::new(BuggyInc::new());

        let ths: Vec<_> = (0..2)
            .map(|_| {
                let buggy_inc = buggy_inc.clone();
                thread::spawn(move || buggy_inc.inc())
            })
            .collect();

        for th in ths {
            th.join().unwrap();
        }

        assert_eq!(2, buggy_inc.num.load(Relaxed));
    }

    use loom::sync::mpsc::channel;

    pub fn basic_sequential_usage() {
        let (s, r) = channel();
        s.send(5).unwrap();
        let val = r.recv().unwrap();
        assert_eq!(val, 5);
    }

    pub fn basic_parallel_usage() {
        let (s, r) = channel();
        thread::spawn(move || {
            s.send(5).unwrap();
        });
        let val = r.recv().unwrap();
        assert_eq!(val, 5);
    }

    pub fn commutative_senders() {
        let (s, r) = channel();
        let s2 = s.clone();
        thread::spawn(move || {
            s.send(5).unwrap();
        });
        thread::spawn(move || {
            s2.send(6).unwrap();
        });
        let mut val = r.recv().unwrap();
        val += r.recv().unwrap();
        assert_eq!(val, 11);
    }

    fn ignore_result<A, B>(_: Result<A, B>) {}

    pub fn non_commutative_senders1() {
        let (s, r) = channel();
        let s2 = s.clone();
        thread::spawn(move || {
            ignore_result(s.send(5));
        });
        thread::spawn(move || {
            ignore_result(s2.send(6));
        });
        let val = r.recv().unwrap();
        assert_eq!(val, 5);
        ignore_result(r.recv());
    }

    pub fn non_commutative_senders2() {
        let (s, r) = channel();
        let s2 = s.clone();
        thread::spawn(move || {
            ignore_result(s.send(5));
        });
        thread::spawn(move || {
            ignore_result(s2.send(6));
        });
        let val = r.recv().unwrap();
        assert_eq!(val, 6);
        ignore_result(r.recv());
    }

    pub fn drop_receiver() {
        let (s, r) = channel();
        s.send(1).unwrap();
        s.send(2).unwrap();
        assert_eq!(r.recv().unwrap(), 1);
    }

    pub fn many_joins() {
        let mut handles = vec![];
        let mutex = loom::sync::Arc::new(loom::sync::Mutex::new(()));
        let lock = mutex.lock().unwrap();

        for _ in 1..3 {
            let mutex = mutex.clone();
            handles.push(thread::spawn(move || {
                drop(mutex.lock().unwrap());
            }));
        }

        std::mem::drop(lock);

        for handle in handles.into_iter() {
            let _ = handle.join();
        }
    }

    pub fn alt_join() {
        use loom::sync::{Arc, Mutex};

        let arcmut: Arc<Mutex<Option<thread::JoinHandle<()>>>> = Arc::new(Mutex::new(None));
        let lock = arcmut.lock().unwrap();

        let arcmut2 = arcmut.clone();

        let th1 = thread::spawn(|| {});
        let th2 = thread::spawn(move || {
            drop(arcmut2.lock().unwrap());
            let _ = th1.join();
        });
        let th3 = thread::spawn(move || {});
        std::mem::drop(lock);
        let _ = th3.join();
        let _ = th2.join();
    }

    /// `spec.rs::test_seq_cst`, with loom's leaked statics and `seen` set as there.
    pub fn test_seq_cst(seen: &'static std::sync::Mutex<HashSet<usize>>) {
        let x: &'static _ = Box::leak(Box::new(AtomicBool::new(false)));
        let y: &'static _ = Box::leak(Box::new(AtomicBool::new(false)));
        let z: &'static _ = Box::leak(Box::new(std::sync::atomic::AtomicUsize::new(0)));

        thread::spawn(move || {
            y.store(true, Ordering::SeqCst);
        });
        let t1 = thread::spawn(move || {
            while !x.load(Ordering::SeqCst) {
                loom::thread::yield_now();
            }
            if y.load(Ordering::SeqCst) {
                z.fetch_add(1, Ordering::Relaxed);
            }
        });
        let t2 = thread::spawn(move || {
            while !y.load(Ordering::SeqCst) {
                loom::thread::yield_now();
            }
            if x.load(Ordering::SeqCst) {
                z.fetch_add(1, Ordering::Relaxed);
            }
        });
        x.store(true, Ordering::SeqCst);

        t1.join().unwrap();
        t2.join().unwrap();
        let z = z.load(Ordering::SeqCst);
        assert_ne!(z, 0, "z == 0 is not possible with SeqCst");
        seen.lock().unwrap().insert(z);
    }
}

macro_rules! rows {
    ($($name:ident),* $(,)?) => {
        $(
            row(
                stringify!($name),
                loom(loom_tests::$name),
                braid_port(bodies::$name),
            );
        )*
    };
}

fn main() {
    // The failures loom and braid are expected to find would print their panics
    // (`LOOM_TESTS_PANICS=1` shows them).
    if std::env::var_os("LOOM_TESTS_PANICS").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    println!("| test | loom executions | loom s | braid schedules | braid s |");
    println!("|---|---:|---:|---:|---:|");
    rows!(fetch_add_atomic);
    for (name, l, b) in [
        ("atomic_usize::xor", loom_tests::xor as fn(), {
            braid_port(bodies::atomic_usize::xor)
        }),
        ("atomic_usize::max", loom_tests::max, {
            braid_port(bodies::atomic_usize::max)
        }),
        ("atomic_usize::min", loom_tests::min, {
            braid_port(bodies::atomic_usize::min)
        }),
        (
            "atomic_usize::compare_exchange",
            loom_tests::compare_exchange,
            { braid_port(bodies::atomic_usize::compare_exchange) },
        ),
        ("atomic_usize::fetch_update", loom_tests::fetch_update, {
            braid_port(bodies::atomic_usize::fetch_update)
        }),
    ] {
        row(name, loom(l), b);
    }
    rows!(
        compare_and_swap,
        check_ordering_valid,
        two_mutexes_deadlock,
        mutex_enforces_mutual_exclusion,
        rwlock_read_one,
        rwlock_read_two_write_one,
        rwlock_write_three,
        rwlock_write_then_try_write,
        rwlock_write_then_try_read,
        rwlock_read_then_try_write,
        rwlock_try_read,
        rwlock_write,
        rwlock_try_write,
        rwlock_into_inner,
        rwlock_two_writers,
        yield_completes,
        checks_fail,
        basic_sequential_usage,
        basic_parallel_usage,
        commutative_senders,
        non_commutative_senders1,
        non_commutative_senders2,
        drop_receiver,
        many_joins,
        alt_join,
    );
    // spec.rs::test_seq_cst: loom's test sets `preemption_bound = Some(1)` (and is `#[ignore]`:
    // loom fails it).
    let seen: &'static _ = Box::leak(Box::new(std::sync::Mutex::new(HashSet::new())));
    let loom_side = loom_with(Some(1), move || loom_tests::test_seq_cst(seen));
    let braid_seen = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let s = braid_seen.clone();
    let braid_side = braid_port(move || bodies::test_seq_cst(s.clone()));
    row("test_seq_cst (loom: PB 1)", loom_side, braid_side);
    for (what, totals) in [("prove", &PROVED), ("fail", &FAILED)] {
        let (loom_secs, braid_secs, rows) = *totals.lock().unwrap();
        println!("| total, the {rows} tests both {what} | | {loom_secs:.4} | | {braid_secs:.4} |");
    }
}
