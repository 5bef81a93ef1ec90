#![warn(rust_2018_idioms)]
// The tests not ported (`#[cfg(any())]`, see the README) leave some imports and helpers unused.
#![allow(unused_imports, dead_code)]

use braid::tokio;
use tokio_conformance::tokio_test;

use std::task::Poll;

use futures::future::FutureExt;

use tokio::sync::{RwLock, RwLockWriteGuard};
use tokio_test::task::spawn;
use tokio_test::{assert_pending, assert_ready};

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn into_inner() {
    let rwlock = RwLock::new(42);
    assert_eq!(rwlock.into_inner(), 42);
}

// multiple reads should be Ready
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn read_shared() {
    let rwlock = RwLock::new(100);

    let mut t1 = spawn(rwlock.read());
    let _g1 = assert_ready!(t1.poll());
    let mut t2 = spawn(rwlock.read());
    let _g2 = assert_ready!(t2.poll());
}

// When there is an active shared owner, exclusive access should not be possible
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_shared_pending() {
    let rwlock = RwLock::new(100);
    let mut t1 = spawn(rwlock.read());

    let _g1 = assert_ready!(t1.poll());
    let mut t2 = spawn(rwlock.write());
    assert_pending!(t2.poll());
}

// When there is an active exclusive owner, subsequent exclusive access should not be possible
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn read_exclusive_pending() {
    let rwlock = RwLock::new(100);
    let mut t1 = spawn(rwlock.write());

    let _g1 = assert_ready!(t1.poll());
    let mut t2 = spawn(rwlock.read());
    assert_pending!(t2.poll());
}

// If the max shared access is reached and subsequent shared access is pending
// should be made available when one of the shared accesses is dropped
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn exhaust_reading() {
    // A `#[test]` in tokio, outside any runtime: no cooperative budget. Its 1,024 reads in one
    // poll would spend a task's 128.
    tokio::task::coop::unconstrained(async {
        let rwlock = RwLock::with_max_readers(100, 1024);
        let mut reads = Vec::new();
        loop {
            let mut t = spawn(rwlock.read());
            match t.poll() {
                Poll::Ready(guard) => reads.push(guard),
                Poll::Pending => break,
            }
        }

        let mut t1 = spawn(rwlock.read());
        assert_pending!(t1.poll());
        let g2 = reads.pop().unwrap();
        drop(g2);
        assert!(t1.is_woken());
        let _g1 = assert_ready!(t1.poll());
    })
    .await
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic(expected = "a RwLock may not be created with 0 readers")]
async fn zero_max_readers() {
    RwLock::with_max_readers(100, 0);
}

#[cfg(any())] // not ported: needs a const constructor (a braid primitive is an object of its run)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic(expected = "a RwLock may not be created with 0 readers")]
async fn zero_max_readers_const() {
    RwLock::const_with_max_readers(100, 0);
}

// When there is an active exclusive owner, subsequent exclusive access should not be possible
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_exclusive_pending() {
    let rwlock = RwLock::new(100);
    let mut t1 = spawn(rwlock.write());

    let _g1 = assert_ready!(t1.poll());
    let mut t2 = spawn(rwlock.write());
    assert_pending!(t2.poll());
}

// When there is an active shared owner, exclusive access should be possible after shared is dropped
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_shared_drop() {
    let rwlock = RwLock::new(100);
    let mut t1 = spawn(rwlock.read());

    let g1 = assert_ready!(t1.poll());
    let mut t2 = spawn(rwlock.write());
    assert_pending!(t2.poll());
    drop(g1);
    assert!(t2.is_woken());
    let _g2 = assert_ready!(t2.poll());
}

// when there is an active shared owner, and exclusive access is triggered,
// subsequent shared access should not be possible as write gathers all the available semaphore permits
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_read_shared_pending() {
    let rwlock = RwLock::new(100);
    let mut t1 = spawn(rwlock.read());
    let _g1 = assert_ready!(t1.poll());

    let mut t2 = spawn(rwlock.read());
    let _g2 = assert_ready!(t2.poll());

    let mut t3 = spawn(rwlock.write());
    assert_pending!(t3.poll());

    let mut t4 = spawn(rwlock.read());
    assert_pending!(t4.poll());
}

// when there is an active shared owner, and exclusive access is triggered,
// reading should be possible after pending exclusive access is dropped
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_read_shared_drop_pending() {
    let rwlock = RwLock::new(100);
    let mut t1 = spawn(rwlock.read());
    let _g1 = assert_ready!(t1.poll());

    let mut t2 = spawn(rwlock.write());
    assert_pending!(t2.poll());

    let mut t3 = spawn(rwlock.read());
    assert_pending!(t3.poll());
    drop(t2);

    assert!(t3.is_woken());
    let _t3 = assert_ready!(t3.poll());
}

// Acquire an RwLock nonexclusively by a single task
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn read_uncontested() {
    let rwlock = RwLock::new(100);
    let result = *rwlock.read().await;

    assert_eq!(result, 100);
}

// Acquire an uncontested RwLock in exclusive mode
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_uncontested() {
    let rwlock = RwLock::new(100);
    let mut result = rwlock.write().await;
    *result += 50;
    assert_eq!(*result, 150);
}

// RwLocks should be acquired in the order that their Futures are waited upon.
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn write_order() {
    let rwlock = RwLock::<Vec<u32>>::new(vec![]);
    let fut2 = rwlock.write().map(|mut guard| guard.push(2));
    let fut1 = rwlock.write().map(|mut guard| guard.push(1));
    fut1.await;
    fut2.await;

    let g = rwlock.read().await;
    assert_eq!(*g, vec![1, 2]);
}

// A single RwLock is contested by tasks in multiple threads
#[cfg(all(feature = "full", not(target_os = "wasi")))] // Wasi doesn't support threads
#[cfg_attr(miri, ignore)]
// Too slow on miri.
// 8,000 lock operations, each a lock and an unlock: a long run, not a livelock.
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn multithreaded() {
    use futures::stream::{self, StreamExt};
    use std::sync::Arc;
    use tokio::sync::Barrier;

    let barrier = Arc::new(Barrier::new(5));
    let rwlock = Arc::new(RwLock::<u32>::new(0));
    let rwclone1 = rwlock.clone();
    let rwclone2 = rwlock.clone();
    let rwclone3 = rwlock.clone();
    let rwclone4 = rwlock.clone();

    let b1 = barrier.clone();
    tokio::spawn(async move {
        stream::iter(0..1000)
            .for_each(move |_| {
                let rwlock = rwclone1.clone();
                async move {
                    let mut guard = rwlock.write().await;
                    *guard += 2;
                }
            })
            .await;
        b1.wait().await;
    });

    let b2 = barrier.clone();
    tokio::spawn(async move {
        stream::iter(0..1000)
            .for_each(move |_| {
                let rwlock = rwclone2.clone();
                async move {
                    let mut guard = rwlock.write().await;
                    *guard += 3;
                }
            })
            .await;
        b2.wait().await;
    });

    let b3 = barrier.clone();
    tokio::spawn(async move {
        stream::iter(0..1000)
            .for_each(move |_| {
                let rwlock = rwclone3.clone();
                async move {
                    let mut guard = rwlock.write().await;
                    *guard += 5;
                }
            })
            .await;
        b3.wait().await;
    });

    let b4 = barrier.clone();
    tokio::spawn(async move {
        stream::iter(0..1000)
            .for_each(move |_| {
                let rwlock = rwclone4.clone();
                async move {
                    let mut guard = rwlock.write().await;
                    *guard += 7;
                }
            })
            .await;
        b4.wait().await;
    });

    barrier.wait().await;
    let g = rwlock.read().await;
    assert_eq!(*g, 17_000);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn try_write() {
    let lock = RwLock::new(0);
    let read_guard = lock.read().await;
    assert!(lock.try_write().is_err());
    drop(read_guard);
    assert!(lock.try_write().is_ok());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn try_read_try_write() {
    let lock: RwLock<usize> = RwLock::new(15);

    {
        let rg1 = lock.try_read().unwrap();
        assert_eq!(*rg1, 15);

        assert!(lock.try_write().is_err());

        let rg2 = lock.try_read().unwrap();
        assert_eq!(*rg2, 15)
    }

    {
        let mut wg = lock.try_write().unwrap();
        *wg = 1515;

        assert!(lock.try_read().is_err())
    }

    assert_eq!(*lock.try_read().unwrap(), 1515);
}

#[cfg(any())] // not ported: needs RwLockWriteGuard::downgrade_map / try_downgrade_map (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn downgrade_map() {
    let lock = RwLock::new(0);
    let write_guard = lock.write().await;
    let mut read_t = spawn(lock.read());

    // We can't create a read when a write exists
    assert_pending!(read_t.poll());

    // During the call to `f`, `read_t` doesn't have access yet.
    let read_guard1 = RwLockWriteGuard::downgrade_map(write_guard, |v| {
        assert_pending!(read_t.poll());
        v
    });

    // After the downgrade, `read_t` got the lock
    let read_guard2 = assert_ready!(read_t.poll());

    // Ensure they're equal, as we return the original value
    assert_eq!(&*read_guard1 as *const _, &*read_guard2 as *const _);
}

#[cfg(any())] // not ported: needs RwLockWriteGuard::downgrade_map / try_downgrade_map (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn try_downgrade_map() {
    let lock = RwLock::new(0);
    let write_guard = lock.write().await;
    let mut read_t = spawn(lock.read());

    // We can't create a read when a write exists
    assert_pending!(read_t.poll());

    // During the call to `f`, `read_t` doesn't have access yet.
    let write_guard = RwLockWriteGuard::try_downgrade_map(write_guard, |_| {
        assert_pending!(read_t.poll());
        None::<&()>
    })
    .expect_err("downgrade didn't fail");

    // After `f` returns `None`, `read_t` doesn't have access
    assert_pending!(read_t.poll());

    // After `f` returns `Some`, `read_t` does have access
    let read_guard1 = RwLockWriteGuard::try_downgrade_map(write_guard, |v| Some(v))
        .expect("downgrade didn't succeed");
    let read_guard2 = assert_ready!(read_t.poll());

    // Ensure they're equal, as we return the original value
    assert_eq!(&*read_guard1 as *const _, &*read_guard2 as *const _);
}
