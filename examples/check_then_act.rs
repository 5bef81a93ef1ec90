//! Check a balance, then withdraw, in two steps: two withdrawals both pass the check.
//! `cargo test --example check_then_act`
use std::sync::Arc;

#[braid::test]
#[should_panic(expected = "overdrawn")]
async fn check_then_act() {
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
