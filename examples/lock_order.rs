//! Two tasks take two locks in opposite orders: a deadlock. `cargo test --example lock_order`
use std::sync::Arc;

#[braid::test]
#[should_panic(expected = "deadlock")]
async fn lock_order_deadlock() {
    lock_order_deadlock_body().await;
}

async fn lock_order_deadlock_body() {
    let (a, b) = (
        Arc::new(braid::sync::Mutex::named("a", ())),
        Arc::new(braid::sync::Mutex::named("b", ())),
    );
    let (a2, b2) = (a.clone(), b.clone());
    let other = braid::spawn(async move {
        let _a = a2.lock().await;
        let _b = b2.lock().await;
    });
    let _b = b.lock().await;
    let _a = a.lock().await;
    drop((_a, _b));
    other.await.unwrap();
}

/// `cargo run --example lock_order`: the same race through `braid::check`, printing what braid
/// finds (the test above is the form to copy).
fn main() {
    let report = braid::check(|| async { lock_order_deadlock_body().await }).run();
    match report.failure() {
        Some(failure) => println!("{}\n{failure}", failure.trace),
        None => println!("{:?}", report.outcome),
    }
}
