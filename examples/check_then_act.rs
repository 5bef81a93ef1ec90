//! Check a balance, then withdraw, in two steps: two withdrawals both pass the check.
//! `cargo test --example check_then_act`
use std::sync::Arc;

#[braid::test]
#[should_panic(expected = "overdrawn")]
async fn check_then_act() {
    check_then_act_body().await;
}

async fn check_then_act_body() {
    let balance = Arc::new(braid::sync::Mutex::new(100i32));
    let withdraw = |b: Arc<braid::sync::Mutex<i32>>| async move {
        if *b.lock().await >= 80 {
            *b.lock().await -= 80;
        }
    };
    let other = braid::spawn(withdraw(balance.clone()));
    withdraw(balance.clone()).await;
    other.await.unwrap();
    assert!(*balance.lock().await >= 0, "overdrawn");
}

/// `cargo run --example check_then_act`: the same race through `braid::check`, printing what braid
/// finds (the test above is the form to copy).
fn main() {
    let report = braid::check(|| async { check_then_act_body().await }).run();
    match report.failure() {
        Some(failure) => println!("{}\n{failure}", failure.trace),
        None => println!("{:?}", report.outcome),
    }
}
