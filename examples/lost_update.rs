//! A read-modify-write split by an await loses an update. `cargo test --example lost_update`
use std::sync::Arc;

#[braid::test]
#[should_panic(expected = "left: 1")]
async fn lost_update() {
    let counter = Arc::new(braid::sync::Mutex::new(0));
    let c = counter.clone();
    let other = braid::spawn(async move {
        let v = *c.lock().await;
        *c.lock().await = v + 1;
    });
    let v = *counter.lock().await;
    *counter.lock().await = v + 1;
    other.await.unwrap();
    assert_eq!(*counter.lock().await, 2);
}
