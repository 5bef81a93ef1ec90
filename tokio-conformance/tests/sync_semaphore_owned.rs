// The tests not ported (`#[cfg(any())]`, see the README) leave some imports and helpers unused.
#![allow(unused_imports, dead_code)]

use braid::tokio;
use tokio_conformance::tokio_test;

use std::sync::Arc;
use tokio::sync::Semaphore;

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn try_acquire() {
    let sem = Arc::new(Semaphore::new(1));
    {
        let p1 = sem.clone().try_acquire_owned();
        assert!(p1.is_ok());
        let p2 = sem.clone().try_acquire_owned();
        assert!(p2.is_err());
    }
    let p3 = sem.try_acquire_owned();
    assert!(p3.is_ok());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn try_acquire_many() {
    let sem = Arc::new(Semaphore::new(42));
    {
        let p1 = sem.clone().try_acquire_many_owned(42);
        assert!(p1.is_ok());
        let p2 = sem.clone().try_acquire_owned();
        assert!(p2.is_err());
    }
    let p3 = sem.clone().try_acquire_many_owned(32);
    assert!(p3.is_ok());
    let p4 = sem.clone().try_acquire_many_owned(10);
    assert!(p4.is_ok());
    assert!(sem.try_acquire_owned().is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
async fn acquire() {
    let sem = Arc::new(Semaphore::new(1));
    let p1 = sem.clone().try_acquire_owned().unwrap();
    let sem_clone = sem.clone();
    let j = tokio::spawn(async move {
        let _p2 = sem_clone.acquire_owned().await;
    });
    drop(p1);
    j.await.unwrap();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
async fn acquire_many() {
    let semaphore = Arc::new(Semaphore::new(42));
    let permit32 = semaphore.clone().try_acquire_many_owned(32).unwrap();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let join_handle = tokio::spawn(async move {
        let _permit10 = semaphore.clone().acquire_many_owned(10).await.unwrap();
        sender.send(()).unwrap();
        let _permit32 = semaphore.acquire_many_owned(32).await.unwrap();
    });
    receiver.await.unwrap();
    drop(permit32);
    join_handle.await.unwrap();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(feature = "full")]
async fn add_permits() {
    let sem = Arc::new(Semaphore::new(0));
    let sem_clone = sem.clone();
    let j = tokio::spawn(async move {
        let _p2 = sem_clone.acquire_owned().await;
    });
    sem.add_permits(1);
    j.await.unwrap();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn forget() {
    let sem = Arc::new(Semaphore::new(1));
    {
        let p = sem.clone().try_acquire_owned().unwrap();
        assert_eq!(sem.available_permits(), 0);
        p.forget();
        assert_eq!(sem.available_permits(), 0);
    }
    assert_eq!(sem.available_permits(), 0);
    assert!(sem.try_acquire_owned().is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn merge() {
    let sem = Arc::new(Semaphore::new(3));
    {
        let mut p1 = sem.clone().try_acquire_owned().unwrap();
        assert_eq!(sem.available_permits(), 2);
        let p2 = sem.clone().try_acquire_many_owned(2).unwrap();
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
    let mut p1 = sem1.try_acquire_owned().unwrap();
    let p2 = sem2.try_acquire_owned().unwrap();
    p1.merge(p2)
}

#[cfg(target_pointer_width = "32")]
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic(expected = "a semaphore may not have more than MAX_PERMITS permits")]
async fn acquire_many_owned_exceeds_maxpermits() {
    let s = Arc::new(Semaphore::new(0));
    let _ =
        tokio_test::task::spawn(s.acquire_many_owned((Semaphore::MAX_PERMITS as u32) + 1)).poll();
}

#[cfg(target_pointer_width = "32")]
#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[should_panic(expected = "a semaphore may not have more than MAX_PERMITS permits")]
async fn acquire_many_owned_top_bit_exceeds_maxpermits() {
    let s = Arc::new(Semaphore::new(0));
    let _ = tokio_test::task::spawn(s.acquire_many_owned(1_u32 << 31)).poll();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn split() {
    let sem = Arc::new(Semaphore::new(5));
    let mut p1 = sem.clone().try_acquire_many_owned(3).unwrap();
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
#[cfg(feature = "full")]
async fn stress_test() {
    let sem = Arc::new(Semaphore::new(5));
    let mut join_handles = Vec::new();
    for _ in 0..1000 {
        let sem_clone = sem.clone();
        join_handles.push(tokio::spawn(async move {
            let _p = sem_clone.acquire_owned().await;
        }));
    }
    for j in join_handles {
        j.await.unwrap();
    }
    // there should be exactly 5 semaphores available now
    let _p1 = sem.clone().try_acquire_owned().unwrap();
    let _p2 = sem.clone().try_acquire_owned().unwrap();
    let _p3 = sem.clone().try_acquire_owned().unwrap();
    let _p4 = sem.clone().try_acquire_owned().unwrap();
    let _p5 = sem.clone().try_acquire_owned().unwrap();
    assert!(sem.try_acquire_owned().is_err());
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
#[cfg(target_pointer_width = "64")]
async fn merge_many_permits_owned() {
    let sem = Arc::new(Semaphore::new(6_000_000_000));
    let mut a = sem.clone().try_acquire_many_owned(3_000_000_000).unwrap();
    let b = sem.clone().try_acquire_many_owned(3_000_000_000).unwrap();
    assert_eq!(a.num_permits(), 3_000_000_000);
    assert_eq!(b.num_permits(), 3_000_000_000);
    assert_eq!(sem.available_permits(), 0);

    a.merge(b);
    assert_eq!(a.num_permits(), 6_000_000_000);
    assert_eq!(sem.available_permits(), 0);

    drop(a);
    assert_eq!(sem.available_permits(), 6_000_000_000);
}
