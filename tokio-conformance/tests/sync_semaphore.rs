// The tests not ported (`#[cfg(any())]`, see the README) leave some imports and helpers unused.
#![allow(unused_imports, dead_code)]

use braid::tokio;
use tokio_conformance::tokio_test;

use std::sync::Arc;
use tokio::sync::Semaphore;

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn no_permits() {
    // this should not panic
    Semaphore::new(0);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn try_acquire() {
    let sem = Semaphore::new(1);
    {
        let p1 = sem.try_acquire();
        assert!(p1.is_ok());
        let p2 = sem.try_acquire();
        assert!(p2.is_err());
    }
    let p3 = sem.try_acquire();
    assert!(p3.is_ok());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
async fn acquire() {
    let sem = Arc::new(Semaphore::new(1));
    let p1 = sem.try_acquire().unwrap();
    let sem_clone = sem.clone();
    let j = tokio::spawn(async move {
        let _p2 = sem_clone.acquire().await;
    });
    drop(p1);
    j.await.unwrap();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
async fn add_permits() {
    let sem = Arc::new(Semaphore::new(0));
    let sem_clone = sem.clone();
    let j = tokio::spawn(async move {
        let _p2 = sem_clone.acquire().await;
    });
    sem.add_permits(1);
    j.await.unwrap();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn add_permits_open() {
    for size in 0..4 {
        for add in 0..4 {
            let sem = Arc::new(Semaphore::new(size));
            sem.add_permits(add);
            assert_eq!(sem.available_permits(), size + add);
            assert!(!sem.is_closed());
        }
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn add_permits_closed() {
    for size in 0..4 {
        for add in 0..4 {
            let sem = Arc::new(Semaphore::new(size));
            sem.close();
            sem.add_permits(add);
            assert_eq!(sem.available_permits(), size + add);
            assert!(sem.is_closed());
        }
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn close_drops_wakers_outside_lock() {
    use futures::task::{waker, ArcWake};
    use std::future::Future;
    use std::task::Context;
    use tokio::sync::OwnedSemaphorePermit;

    struct ReleaseOnDrop {
        _permit: OwnedSemaphorePermit,
    }

    impl ArcWake for ReleaseOnDrop {
        fn wake_by_ref(_arc_self: &Arc<Self>) {}
    }

    let sem = Arc::new(Semaphore::new(1));

    let mut fut = Box::pin(async {
        let _ = sem.acquire().await;
    });

    let waker = waker(Arc::new(ReleaseOnDrop {
        _permit: sem.clone().try_acquire_owned().unwrap(),
    }));
    let mut cx = Context::from_waker(&waker);
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    drop(waker);

    // Waking the waiter drops the last reference to the waker, which releases
    // a permit. This shouldn't deadlock.
    sem.close();
    assert_eq!(sem.available_permits(), 1);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn close_wakes_waiters_outside_lock() {
    use futures::task::{waker, ArcWake};
    use std::future::Future;
    use std::task::Context;

    struct ReleaseOnWake(Arc<Semaphore>);

    impl ArcWake for ReleaseOnWake {
        fn wake_by_ref(arc_self: &Arc<Self>) {
            arc_self.0.add_permits(1);
        }
    }

    let sem = Arc::new(Semaphore::new(0));

    let mut fut = Box::pin(async {
        let _ = sem.acquire().await;
    });

    let waker = waker(Arc::new(ReleaseOnWake(sem.clone())));
    let mut cx = Context::from_waker(&waker);
    assert!(fut.as_mut().poll(&mut cx).is_pending());

    // The waker releases a permit when it is woken. This shouldn't deadlock.
    sem.close();
    assert_eq!(sem.available_permits(), 1);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn close_wakes_all_waiters() {
    use futures::task::{waker, ArcWake};
    use std::future::Future;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::task::{Context, Poll};

    // More waiters than are woken in one batch.
    const WAITERS: usize = 100;

    struct CountWakes(AtomicUsize);

    impl ArcWake for CountWakes {
        fn wake_by_ref(arc_self: &Arc<Self>) {
            arc_self.0.fetch_add(1, SeqCst);
        }
    }

    let sem = Semaphore::new(0);
    let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
    let waker = waker(wakes.clone());
    let mut cx = Context::from_waker(&waker);

    let mut acquires: Vec<_> = (0..WAITERS).map(|_| Box::pin(sem.acquire())).collect();
    for acquire in &mut acquires {
        assert!(acquire.as_mut().poll(&mut cx).is_pending());
    }

    sem.close();
    assert_eq!(wakes.0.load(SeqCst), WAITERS);

    for acquire in &mut acquires {
        assert!(matches!(
            acquire.as_mut().poll(&mut cx),
            Poll::Ready(Err(_))
        ));
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn forget() {
    let sem = Arc::new(Semaphore::new(1));
    {
        let p = sem.try_acquire().unwrap();
        assert_eq!(sem.available_permits(), 0);
        p.forget();
        assert_eq!(sem.available_permits(), 0);
    }
    assert_eq!(sem.available_permits(), 0);
    assert!(sem.try_acquire().is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn forget_open() {
    for size in 0..4 {
        for sub in 0..4 {
            let sem = Arc::new(Semaphore::new(size));
            let actual_sub = sem.forget_permits(sub);
            let expected = size.saturating_sub(sub);
            assert_eq!(sem.available_permits(), expected, "case: {size}-{sub}");
            assert_eq!(actual_sub, size - expected);
            assert!(!sem.is_closed());
        }
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn forget_closed() {
    for size in 0..4 {
        for sub in 0..4 {
            let sem = Arc::new(Semaphore::new(size));
            sem.close();
            let actual_sub = sem.forget_permits(sub);
            let expected = size.saturating_sub(sub);
            assert_eq!(sem.available_permits(), expected, "case: {size}-{sub}");
            assert_eq!(actual_sub, size - expected);
            assert!(sem.is_closed());
        }
    }
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn merge() {
    let sem = Arc::new(Semaphore::new(3));
    {
        let mut p1 = sem.try_acquire().unwrap();
        assert_eq!(sem.available_permits(), 2);
        let p2 = sem.try_acquire_many(2).unwrap();
        assert_eq!(sem.available_permits(), 0);
        p1.merge(p2);
        assert_eq!(sem.available_permits(), 0);
    }
    assert_eq!(sem.available_permits(), 3);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(not(target_family = "wasm"))] // No stack unwinding on wasm targets
#[should_panic]
async fn merge_unrelated_permits() {
    let sem1 = Arc::new(Semaphore::new(3));
    let sem2 = Arc::new(Semaphore::new(3));
    let mut p1 = sem1.try_acquire().unwrap();
    let p2 = sem2.try_acquire().unwrap();
    p1.merge(p2);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn split() {
    let sem = Semaphore::new(5);
    let mut p1 = sem.try_acquire_many(3).unwrap();
    assert_eq!(sem.available_permits(), 2);
    assert_eq!(p1.num_permits(), 3);
    let mut p2 = p1.split(1).unwrap();
    assert_eq!(sem.available_permits(), 2);
    assert_eq!(p1.num_permits(), 2);
    assert_eq!(p2.num_permits(), 1);
    let p3 = p1.split(0).unwrap();
    assert_eq!(p3.num_permits(), 0);
    drop(p1);
    assert_eq!(sem.available_permits(), 4);
    let p4 = p2.split(1).unwrap();
    assert_eq!(p2.num_permits(), 0);
    assert_eq!(p4.num_permits(), 1);
    assert!(p2.split(1).is_none());
    drop(p2);
    assert_eq!(sem.available_permits(), 4);
    drop(p3);
    assert_eq!(sem.available_permits(), 4);
    drop(p4);
    assert_eq!(sem.available_permits(), 5);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn permit_semaphore() {
    let sem = Semaphore::new(1);
    let permit = sem.try_acquire().unwrap();

    assert!(std::ptr::eq(permit.semaphore(), &sem));
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
async fn stress_test() {
    let sem = Arc::new(Semaphore::new(5));
    let mut join_handles = Vec::new();
    for _ in 0..1000 {
        let sem_clone = sem.clone();
        join_handles.push(tokio::spawn(async move {
            let _p = sem_clone.acquire().await;
        }));
    }
    for j in join_handles {
        j.await.unwrap();
    }
    // there should be exactly 5 semaphores available now
    let _p1 = sem.try_acquire().unwrap();
    let _p2 = sem.try_acquire().unwrap();
    let _p3 = sem.try_acquire().unwrap();
    let _p4 = sem.try_acquire().unwrap();
    let _p5 = sem.try_acquire().unwrap();
    assert!(sem.try_acquire().is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn add_max_amount_permits() {
    let s = tokio::sync::Semaphore::new(0);
    s.add_permits(tokio::sync::Semaphore::MAX_PERMITS);
    assert_eq!(s.available_permits(), tokio::sync::Semaphore::MAX_PERMITS);
}

#[cfg(not(target_family = "wasm"))] // wasm currently doesn't support unwinding
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic]
async fn add_more_than_max_amount_permits1() {
    let s = tokio::sync::Semaphore::new(1);
    s.add_permits(tokio::sync::Semaphore::MAX_PERMITS);
}

#[cfg(not(target_family = "wasm"))] // wasm currently doesn't support unwinding
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic]
async fn add_more_than_max_amount_permits2() {
    let s = Semaphore::new(Semaphore::MAX_PERMITS - 1);
    s.add_permits(1);
    s.add_permits(1);
}

#[cfg(not(target_family = "wasm"))] // wasm currently doesn't support unwinding
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic]
async fn panic_when_exceeds_maxpermits() {
    let _ = Semaphore::new(Semaphore::MAX_PERMITS + 1);
}

#[cfg(target_pointer_width = "32")]
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic(expected = "a semaphore may not have more than MAX_PERMITS permits")]
async fn acquire_many_exceeds_maxpermits() {
    let s = Semaphore::new(0);
    let _ = tokio_test::task::spawn(s.acquire_many((Semaphore::MAX_PERMITS as u32) + 1)).poll();
}

#[cfg(target_pointer_width = "32")]
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic(expected = "a semaphore may not have more than MAX_PERMITS permits")]
async fn acquire_many_top_bit_exceeds_maxpermits() {
    let s = Semaphore::new(0);
    let _ = tokio_test::task::spawn(s.acquire_many(1_u32 << 31)).poll();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn no_panic_at_maxpermits() {
    let _ = Semaphore::new(Semaphore::MAX_PERMITS);
    let s = Semaphore::new(Semaphore::MAX_PERMITS - 1);
    s.add_permits(1);
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn blocking_acquire() {
    let sem = Semaphore::new(1);
    let permit = sem.blocking_acquire().unwrap();
    assert_eq!(sem.available_permits(), 0);
    drop(permit);
    assert_eq!(sem.available_permits(), 1);
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(not(target_family = "wasm"))] // spawns a thread, which wasm doesn't support
async fn blocking_acquire_waits_for_permit() {
    let sem = Arc::new(Semaphore::new(0));

    let sem2 = sem.clone();
    let handle = std::thread::spawn(move || {
        // Blocks until a permit becomes available.
        let _permit = sem2.blocking_acquire().unwrap();
    });

    sem.add_permits(1);

    handle.join().unwrap();
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn blocking_acquire_many() {
    let sem = Semaphore::new(5);
    let permit = sem.blocking_acquire_many(3).unwrap();
    assert_eq!(sem.available_permits(), 2);
    drop(permit);
    assert_eq!(sem.available_permits(), 5);
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn blocking_acquire_owned() {
    let sem = Arc::new(Semaphore::new(1));
    let permit = sem.clone().blocking_acquire_owned().unwrap();
    assert_eq!(sem.available_permits(), 0);
    drop(permit);
    assert_eq!(sem.available_permits(), 1);
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn blocking_acquire_many_owned() {
    let sem = Arc::new(Semaphore::new(5));
    let permit = sem.clone().blocking_acquire_many_owned(3).unwrap();
    assert_eq!(sem.available_permits(), 2);
    drop(permit);
    assert_eq!(sem.available_permits(), 5);
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn blocking_acquire_closed() {
    let sem = Arc::new(Semaphore::new(1));
    sem.close();
    assert!(sem.blocking_acquire().is_err());
    assert!(sem.blocking_acquire_many(2).is_err());
    assert!(sem.clone().blocking_acquire_owned().is_err());
    assert!(sem.clone().blocking_acquire_many_owned(2).is_err());
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
#[should_panic = "Cannot block the current thread from within a runtime"]
async fn blocking_acquire_in_async_context() {
    let sem = Semaphore::new(1);
    // Calling a blocking method from an async context must panic.
    let _permit = sem.blocking_acquire();
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
#[should_panic = "Cannot block the current thread from within a runtime"]
async fn blocking_acquire_many_in_async_context() {
    let sem = Semaphore::new(1);
    // Calling a blocking method from an async context must panic.
    let _permit = sem.blocking_acquire_many(1);
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
#[should_panic = "Cannot block the current thread from within a runtime"]
async fn blocking_acquire_owned_in_async_context() {
    let sem = Arc::new(Semaphore::new(1));
    // Calling a blocking method from an async context must panic.
    let _permit = sem.blocking_acquire_owned();
}

#[cfg(any())] // not ported: needs Semaphore::blocking_acquire* (absent from the facade)
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
#[should_panic = "Cannot block the current thread from within a runtime"]
async fn blocking_acquire_many_owned_in_async_context() {
    let sem = Arc::new(Semaphore::new(1));
    // Calling a blocking method from an async context must panic.
    let _permit = sem.blocking_acquire_many_owned(1);
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(target_pointer_width = "64")]
async fn merge_many_permits() {
    let sem = Arc::new(Semaphore::new(6_000_000_000));
    let mut a = sem.try_acquire_many(3_000_000_000).unwrap();
    let b = sem.try_acquire_many(3_000_000_000).unwrap();
    assert_eq!(a.num_permits(), 3_000_000_000);
    assert_eq!(b.num_permits(), 3_000_000_000);
    assert_eq!(sem.available_permits(), 0);

    a.merge(b);
    assert_eq!(a.num_permits(), 6_000_000_000);
    assert_eq!(sem.available_permits(), 0);

    drop(a);
    assert_eq!(sem.available_permits(), 6_000_000_000);
}
