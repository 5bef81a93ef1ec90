//! A read-modify-write split by an await loses an update. `cargo test --example lost_update`
use std::sync::Arc;

#[braid::test]
#[should_panic(expected = "left: 1")]
async fn lost_update() {
    lost_update_body().await;
}

async fn lost_update_body() {
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

/// `cargo run --example lost_update`: the same race through `braid::check`, printing what braid
/// finds (the test above is the form to copy).
fn main() {
    let report = braid::check(|| async { lost_update_body().await }).run();
    match report.failure() {
        Some(failure) => println!("{}\n{failure}", failure.trace),
        None => println!("{:?}", report.outcome),
    }
}
