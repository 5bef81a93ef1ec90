//! The bodies of the ported loom tests, one `async fn` each, shared by `tests/loom_ports.rs`
//! (which proves them) and `peers/src/bin/loom_tests.rs` (which times them against loom's
//! originals). Each follows its loom original line for line: `thread::spawn` is
//! `braid::spawn`, `join()` is `.await`, `loom::sync` is `braid::std::sync` (atomics, `Mutex`)
//! or `braid::tokio::sync` (`RwLock`, `mpsc`), `thread::yield_now()` is
//! `braid::task::yield_now().await`.
//!
//! A loom execution ends when every thread has ended; a braid run ends with its main task,
//! dropping tasks still running. So where loom's test leaves a thread unjoined, the port keeps
//! its handle and awaits it after the rest of loom's main thread, its locals dropped (marked
//! "loom joins at the end").

use std::collections::HashSet;
use std::rc::Rc;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::Arc;

use braid::std::sync::atomic::{AtomicBool, AtomicUsize};
use braid::std::sync::Mutex;
use braid::task::yield_now;
use braid::tokio::sync::{mpsc, RwLock};

// ---- atomic.rs ----

/// `atomic.rs::fetch_add_atomic` (Relaxed in loom: two `fetch_add`s return different values
/// under any ordering, RMWs being atomic).
pub async fn fetch_add_atomic() {
    let a1 = Arc::new(AtomicUsize::new(0));
    let a2 = a1.clone();

    let th = braid::spawn(async move { a2.fetch_add(1, Relaxed) });

    let v1 = a1.fetch_add(1, Relaxed);
    let v2 = th.await.unwrap();

    assert_ne!(v1, v2);
}

// ---- atomic_int.rs ----

/// `atomic_int.rs`'s `test_int!`, for the integer widths braid's std-shaped atomics have.
macro_rules! test_int {
    ($name:ident, $int:ty, $atomic:ty) => {
        pub mod $name {
            #[allow(unused_imports)]
            use braid::std::sync::atomic::*;
            use std::sync::atomic::Ordering::SeqCst;

            const NUM_A: u64 = 11641914933775430211;
            const NUM_B: u64 = 13209405719799650717;

            pub async fn xor() {
                let a: $int = NUM_A as $int;
                let b: $int = NUM_B as $int;

                let atomic = <$atomic>::new(a);
                let prev = atomic.fetch_xor(b, SeqCst);

                assert_eq!(a, prev, "prev did not match");
                assert_eq!(a ^ b, atomic.load(SeqCst), "load failed");
            }

            pub async fn max() {
                let a: $int = NUM_A as $int;
                let b: $int = NUM_B as $int;

                let atomic = <$atomic>::new(a);
                let prev = atomic.fetch_max(b, SeqCst);

                assert_eq!(a, prev, "prev did not match");
                assert_eq!(a.max(b), atomic.load(SeqCst), "load failed");
            }

            pub async fn min() {
                let a: $int = NUM_A as $int;
                let b: $int = NUM_B as $int;

                let atomic = <$atomic>::new(a);
                let prev = atomic.fetch_min(b, SeqCst);

                assert_eq!(a, prev, "prev did not match");
                assert_eq!(a.min(b), atomic.load(SeqCst), "load failed");
            }

            pub async fn compare_exchange() {
                let a: $int = NUM_A as $int;
                let b: $int = NUM_B as $int;

                let atomic = <$atomic>::new(a);
                assert_eq!(Err(a), atomic.compare_exchange(b, a, SeqCst, SeqCst));
                assert_eq!(Ok(a), atomic.compare_exchange(a, b, SeqCst, SeqCst));

                assert_eq!(b, atomic.load(SeqCst));
            }

            pub async fn fetch_update() {
                let a: $int = NUM_A as $int;
                let b: $int = NUM_B as $int;

                let atomic = <$atomic>::new(a);
                assert_eq!(Ok(a), atomic.fetch_update(SeqCst, SeqCst, |_| Some(b)));
                assert_eq!(Err(b), atomic.fetch_update(SeqCst, SeqCst, |_| None));
                assert_eq!(b, atomic.load(SeqCst));
            }
        }
    };
}

test_int!(atomic_u8, u8, AtomicU8);
test_int!(atomic_u16, u16, AtomicU16);
test_int!(atomic_u32, u32, AtomicU32);
test_int!(atomic_usize, usize, AtomicUsize);
test_int!(atomic_i32, i32, AtomicI32);
test_int!(atomic_isize, isize, AtomicIsize);
test_int!(atomic_u64, u64, AtomicU64);
test_int!(atomic_i64, i64, AtomicI64);

// ---- atomic_relaxed.rs ----

/// `atomic_relaxed.rs::compare_and_swap`. std's deprecated `compare_and_swap(c, n)` is by its
/// definition `compare_exchange(c, n).unwrap_or_else(|x| x)` (one RMW), which braid has.
/// Relaxed in loom; the asserted count holds under any ordering.
pub async fn compare_and_swap() {
    let num = Arc::new(AtomicUsize::new(0));

    let ths: Vec<_> = (0..2)
        .map(|_| {
            let num = num.clone();

            braid::spawn(async move {
                let mut curr = num.load(Relaxed);

                loop {
                    let actual = num
                        .compare_exchange(curr, curr + 1, Relaxed, Relaxed)
                        .unwrap_or_else(|x| x);

                    if actual == curr {
                        return;
                    }

                    curr = actual;
                }
            })
        })
        .collect();

    for th in ths {
        th.await.unwrap();
    }

    assert_eq!(2, num.load(Relaxed));
}

/// `atomic_relaxed.rs::check_ordering_valid`: Relaxed then Release store, Acquire then
/// Relaxed load. The assertion holds under release/acquire, hence under SeqCst (which braid
/// takes every ordering as).
pub async fn check_ordering_valid() {
    let n1 = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let n2 = n1.clone();

    let th = braid::spawn(async move {
        n1.0.store(1, Relaxed);
        n1.1.store(1, Release);
    });

    if 1 == n2.1.load(Acquire) {
        assert_eq!(1, n2.0.load(Relaxed));
    }

    th.await.unwrap(); // loom joins at the end
}

// ---- deadlock.rs ----

/// `deadlock.rs::two_mutexes_deadlock` (`#[should_panic]`: the lock-order deadlock).
pub async fn two_mutexes_deadlock() {
    let a = Rc::new(Mutex::new(1));
    let b = Rc::new(Mutex::new(2));

    let th1 = {
        let a = a.clone();
        let b = b.clone();

        braid::spawn(async move {
            let a_lock = a.lock().unwrap();
            let b_lock = b.lock().unwrap();
            assert_eq!(*a_lock + *b_lock, 3);
        })
    };
    let th2 = {
        braid::spawn(async move {
            let b_lock = b.lock().unwrap();
            let a_lock = a.lock().unwrap();
            assert_eq!(*a_lock + *b_lock, 3);
        })
    };
    th1.await.unwrap();
    th2.await.unwrap();
}

// ---- mutex.rs ----

/// `mutex.rs::mutex_enforces_mutual_exclusion` (SeqCst in loom).
pub async fn mutex_enforces_mutual_exclusion() {
    let data = Rc::new((Mutex::new(0), AtomicUsize::new(0)));

    let ths: Vec<_> = (0..2)
        .map(|_| {
            let data = data.clone();

            braid::spawn(async move {
                let mut locked = data.0.lock().unwrap();

                let prev = data.1.fetch_add(1, SeqCst);
                assert_eq!(prev, *locked);
                *locked += 1;
            })
        })
        .collect();

    for th in ths {
        th.await.unwrap();
    }

    let locked = data.0.lock().unwrap();

    assert_eq!(*locked, data.1.load(SeqCst));
}

// ---- rwlock.rs (loom's `RwLock` is std's; braid's is tokio-shaped: `read().await`, no
// poisoning, so no `unwrap()` on a guard) ----

/// `rwlock.rs::rwlock_read_one`.
pub async fn rwlock_read_one() {
    let lock = Arc::new(RwLock::new(1));
    let c_lock = lock.clone();

    let n = lock.read().await;
    assert_eq!(*n, 1);

    braid::spawn(async move {
        let _r = c_lock.read().await;
    })
    .await
    .unwrap();
}

/// `rwlock.rs::rwlock_read_two_write_one` (loom joins at the end).
pub async fn rwlock_read_two_write_one() {
    let lock = Arc::new(RwLock::new(1));

    let ths: Vec<_> = (0..2)
        .map(|_| {
            let lock = lock.clone();

            braid::spawn(async move {
                let _l = lock.read().await;

                yield_now().await;
            })
        })
        .collect();

    {
        let _l = lock.write().await;
        yield_now().await;
    }

    for th in ths {
        th.await.unwrap(); // loom joins at the end
    }
}

/// `rwlock.rs::rwlock_write_three` (loom joins at the end).
pub async fn rwlock_write_three() {
    let lock = Arc::new(RwLock::new(1));

    let ths: Vec<_> = (0..2)
        .map(|_| {
            let lock = lock.clone();

            braid::spawn(async move {
                let _l = lock.write().await;

                yield_now().await;
            })
        })
        .collect();

    {
        let _l = lock.write().await;
        yield_now().await;
    }

    for th in ths {
        th.await.unwrap(); // loom joins at the end
    }
}

/// `rwlock.rs::rwlock_write_then_try_write`.
pub async fn rwlock_write_then_try_write() {
    let lock = Arc::new(RwLock::new(1));

    let _l1 = lock.write().await;

    assert!(lock.try_write().is_err());
}

/// `rwlock.rs::rwlock_write_then_try_read`.
pub async fn rwlock_write_then_try_read() {
    let lock = Arc::new(RwLock::new(1));

    let _l1 = lock.write().await;

    assert!(lock.try_read().is_err());
}

/// `rwlock.rs::rwlock_read_then_try_write` (loom's body takes a write lock, despite the name).
pub async fn rwlock_read_then_try_write() {
    let lock = Arc::new(RwLock::new(1));

    let _l1 = lock.write().await;

    assert!(lock.try_write().is_err());
}

/// `rwlock.rs::rwlock_try_read`.
pub async fn rwlock_try_read() {
    let lock = RwLock::new(1);

    match lock.try_read() {
        Ok(n) => assert_eq!(*n, 1),
        Err(_) => unreachable!(),
    };
}

/// `rwlock.rs::rwlock_write`.
pub async fn rwlock_write() {
    let lock = RwLock::new(1);

    let mut n = lock.write().await;
    *n = 2;

    assert!(lock.try_read().is_err());
}

/// `rwlock.rs::rwlock_try_write`.
pub async fn rwlock_try_write() {
    let lock = RwLock::new(1);

    let n = lock.read().await;
    assert_eq!(*n, 1);

    assert!(lock.try_write().is_err());
}

/// `rwlock.rs::rwlock_into_inner`.
pub async fn rwlock_into_inner() {
    let lock = Rc::new(RwLock::new(0));

    let ths: Vec<_> = (0..2)
        .map(|_| {
            let lock = lock.clone();

            braid::spawn(async move {
                *lock.write().await += 1;
            })
        })
        .collect();

    for th in ths {
        th.await.unwrap();
    }

    let lock = Rc::try_unwrap(lock).ok().unwrap().into_inner();
    assert_eq!(lock, 2);
}

// ---- rwlock_regression1.rs ----

/// `rwlock_regression1.rs::rwlock_two_writers` (Relaxed counter, never read; loom joins
/// the threads at the end).
pub async fn rwlock_two_writers() {
    let lock = Arc::new(RwLock::new(1));
    let c_lock = lock.clone();
    let c_lock2 = lock;

    let atomic = Arc::new(AtomicUsize::new(0));
    let c_atomic = atomic.clone();
    let c_atomic2 = atomic;

    let th1 = braid::spawn(async move {
        let mut w = c_lock.write().await;
        *w += 1;
        c_atomic.fetch_add(1, Relaxed);
    });

    let th2 = braid::spawn(async move {
        let mut w = c_lock2.write().await;
        *w += 1;
        c_atomic2.fetch_add(1, Relaxed);
    });

    // loom joins at the end
    th1.await.unwrap();
    th2.await.unwrap();
}

// ---- yield.rs ----

/// `yield.rs::yield_completes`: a spin on a flag with `yield_now` (Relaxed in loom; a store
/// becomes visible to a later load under any ordering, and loom's model, like braid's, shows
/// it at once).
pub async fn yield_completes() {
    let inc = Arc::new(AtomicUsize::new(0));

    let th = {
        let inc = inc.clone();
        braid::spawn(async move {
            inc.store(1, Relaxed);
        })
    };

    loop {
        if 1 == inc.load(Relaxed) {
            break; // loom's `return`
        }

        yield_now().await;
    }

    th.await.unwrap(); // loom joins at the end
}

// ---- smoke.rs ----

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

/// `smoke.rs::checks_fail` (`#[should_panic]`: the lost update, there under SeqCst too).
pub async fn checks_fail() {
    let buggy_inc = Arc::new(BuggyInc::new());

    let ths: Vec<_> = (0..2)
        .map(|_| {
            let buggy_inc = buggy_inc.clone();
            braid::spawn(async move { buggy_inc.inc() })
        })
        .collect();

    for th in ths {
        th.await.unwrap();
    }

    assert_eq!(2, buggy_inc.num.load(Relaxed));
}

// ---- mpsc.rs (loom's channel is std's unbounded `mpsc::channel`; braid's is tokio's
// `unbounded_channel`: `send` is synchronous as std's, `recv().await` gives `None` where
// std's `recv()` gives `Err`) ----

/// `mpsc.rs::basic_sequential_usage`.
pub async fn basic_sequential_usage() {
    let (s, mut r) = mpsc::unbounded_channel();
    s.send(5).unwrap();
    let val = r.recv().await.unwrap();
    assert_eq!(val, 5);
}

/// `mpsc.rs::basic_parallel_usage`.
pub async fn basic_parallel_usage() {
    let (s, mut r) = mpsc::unbounded_channel();
    let th = braid::spawn(async move {
        s.send(5).unwrap();
    });
    let val = r.recv().await.unwrap();
    assert_eq!(val, 5);
    drop(r);

    th.await.unwrap(); // loom joins at the end
}

/// `mpsc.rs::commutative_senders`.
pub async fn commutative_senders() {
    let (s, mut r) = mpsc::unbounded_channel();
    let s2 = s.clone();
    let th1 = braid::spawn(async move {
        s.send(5).unwrap();
    });
    let th2 = braid::spawn(async move {
        s2.send(6).unwrap();
    });
    let mut val = r.recv().await.unwrap();
    val += r.recv().await.unwrap();
    assert_eq!(val, 11);
    drop(r);

    // loom joins at the end
    th1.await.unwrap();
    th2.await.unwrap();
}

fn ignore_result<A, B>(_: Result<A, B>) {}

/// `mpsc.rs::non_commutative_senders1` (`#[should_panic]`: 6 may come first).
pub async fn non_commutative_senders1() {
    let (s, mut r) = mpsc::unbounded_channel();
    let s2 = s.clone();
    let th1 = braid::spawn(async move {
        ignore_result(s.send(5));
    });
    let th2 = braid::spawn(async move {
        ignore_result(s2.send(6));
    });
    let val = r.recv().await.unwrap();
    assert_eq!(val, 5);
    let _ = r.recv().await;
    drop(r);

    // loom joins at the end
    th1.await.unwrap();
    th2.await.unwrap();
}

/// `mpsc.rs::non_commutative_senders2` (`#[should_panic]`: 5 may come first).
pub async fn non_commutative_senders2() {
    let (s, mut r) = mpsc::unbounded_channel();
    let s2 = s.clone();
    let th1 = braid::spawn(async move {
        ignore_result(s.send(5));
    });
    let th2 = braid::spawn(async move {
        ignore_result(s2.send(6));
    });
    let val = r.recv().await.unwrap();
    assert_eq!(val, 6);
    let _ = r.recv().await;
    drop(r);

    // loom joins at the end
    th1.await.unwrap();
    th2.await.unwrap();
}

/// `mpsc.rs::drop_receiver`.
pub async fn drop_receiver() {
    let (s, mut r) = mpsc::unbounded_channel();
    s.send(1).unwrap();
    s.send(2).unwrap();
    assert_eq!(r.recv().await.unwrap(), 1);
}

// ---- thread_api.rs ----

/// `thread_api.rs::many_joins`.
pub async fn many_joins() {
    let mut handles = vec![];
    let mutex = Arc::new(Mutex::new(()));
    let lock = mutex.lock().unwrap();

    for _ in 1..3 {
        let mutex = mutex.clone();
        handles.push(braid::spawn(async move {
            drop(mutex.lock().unwrap());
        }));
    }

    std::mem::drop(lock);

    for handle in handles.into_iter() {
        let _ = handle.await;
    }
}

/// `thread_api.rs::alt_join`: a thread joined by another thread than its spawner.
pub async fn alt_join() {
    let arcmut: Arc<Mutex<Option<braid::task::JoinHandle<()>>>> = Arc::new(Mutex::new(None));
    let lock = arcmut.lock().unwrap();

    let arcmut2 = arcmut.clone();

    let th1 = braid::spawn(async {});
    let th2 = braid::spawn(async move {
        drop(arcmut2.lock().unwrap());
        let _ = th1.await;
    });
    let th3 = braid::spawn(async move {});
    std::mem::drop(lock);
    let _ = th3.await;
    let _ = th2.await;
}

// ---- spec.rs ----

/// `spec.rs::test_seq_cst`, the SeqCst example of cppreference's memory-order page (`#[ignore]`
/// in loom: loom runs a permutation that SeqCst forbids, giving `z == 0`). loom's `z` is a
/// std atomic outside its model; here it is braid's, so braid sees every access to it.
/// Every value of `z` seen is put in `seen`; the caller checks that it is {1, 2}.
pub async fn test_seq_cst(seen: Arc<std::sync::Mutex<HashSet<usize>>>) {
    let x = Arc::new(AtomicBool::new(false));
    let y = Arc::new(AtomicBool::new(false));
    let z = Arc::new(AtomicUsize::new(0));

    // NOTE: done in this thread after spawning
    // thread::spawn(move || {
    //     x.store(true, Ordering::SeqCst);
    // });
    let th_y = {
        let y = y.clone();
        braid::spawn(async move {
            y.store(true, SeqCst);
        })
    };
    let t1 = {
        let (x, y, z) = (x.clone(), y.clone(), z.clone());
        braid::spawn(async move {
            while !x.load(SeqCst) {
                yield_now().await;
            }
            if y.load(SeqCst) {
                z.fetch_add(1, Relaxed);
            }
        })
    };
    let t2 = {
        let (x, y, z) = (x.clone(), y.clone(), z.clone());
        braid::spawn(async move {
            while !y.load(SeqCst) {
                yield_now().await;
            }
            if x.load(SeqCst) {
                z.fetch_add(1, Relaxed);
            }
        })
    };
    x.store(true, SeqCst);

    t1.await.unwrap();
    t2.await.unwrap();
    let z = z.load(SeqCst);
    assert_ne!(z, 0, "z == 0 is not possible with SeqCst");
    seen.lock().unwrap().insert(z);

    th_y.await.unwrap(); // loom joins at the end
}
