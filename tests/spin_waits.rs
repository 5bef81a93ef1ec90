//! Issue 18's spin-wait tests, unchanged: a yield is fair in every strategy, DFS included.

use std::sync::Arc;

use braid::sync::Mutex;

async fn wait_for(flag: &Mutex<bool>) {
    while !*flag.lock().await {
        braid::task::yield_now().await;
    }
}

// Correct: the data is written before the flag. Proved over fair schedules, no stall.
#[braid::test(strategy = "dfs")]
async fn spin_wait_is_proved() {
    let (ready, data) = (Arc::new(Mutex::new(false)), Arc::new(Mutex::new(0u32)));
    let (r, d) = (ready.clone(), data.clone());
    let producer = braid::spawn(async move {
        *d.lock().await = 42;
        *r.lock().await = true;
    });
    wait_for(&ready).await;
    let v = *data.lock().await;
    assert!(v == 42, "read {v} before the data was written");
    producer.await.unwrap();
}

// Wrong: the flag is set before the data. Found as the failed assertion, not as a stall.
#[braid::test(strategy = "dfs")]
#[should_panic(expected = "before the data was written")]
async fn spin_wait_on_an_early_flag_fails() {
    let (ready, data) = (Arc::new(Mutex::new(false)), Arc::new(Mutex::new(0u32)));
    let (r, d) = (ready.clone(), data.clone());
    let producer = braid::spawn(async move {
        *r.lock().await = true;
        *d.lock().await = 42;
    });
    wait_for(&ready).await;
    let v = *data.lock().await;
    assert!(v == 42, "read {v} before the data was written");
    producer.await.unwrap();
}

// Each side waits for a flag that only the other sets after its own wait: a livelock.
#[braid::test(strategy = "dfs")]
#[should_panic(expected = "livelock")]
async fn two_spinners_livelock() {
    let (a, b) = (Arc::new(Mutex::new(false)), Arc::new(Mutex::new(false)));
    let (a2, b2) = (a.clone(), b.clone());
    let other = braid::spawn(async move {
        wait_for(&a2).await;
        *b2.lock().await = true;
    });
    wait_for(&b).await;
    *a.lock().await = true;
    other.await.unwrap();
}

// The same livelock under the default strategy.
#[braid::test]
#[should_panic(expected = "livelock")]
async fn two_spinners_livelock_by_default() {
    let (a, b) = (Arc::new(Mutex::new(false)), Arc::new(Mutex::new(false)));
    let (a2, b2) = (a.clone(), b.clone());
    let other = braid::spawn(async move {
        wait_for(&a2).await;
        *b2.lock().await = true;
    });
    wait_for(&b).await;
    *a.lock().await = true;
    other.await.unwrap();
}
