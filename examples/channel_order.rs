//! Two producers share a channel; the consumer assumes one producer's message comes first.
//! `cargo test --example channel_order`
#[braid::test]
#[should_panic(expected = "hello must come first")]
async fn channel_order() {
    channel_order_body().await;
}

async fn channel_order_body() {
    let (tx, rx) = braid::sync::mpsc::channel::<&'static str>(2);
    let greeter = tx.clone();
    let hello = braid::spawn(async move { greeter.send("hello").await });
    let data = braid::spawn(async move { tx.send("data").await });
    assert_eq!(rx.recv().await, "hello", "hello must come first");
    hello.await.unwrap();
    data.await.unwrap();
}

/// `cargo run --example channel_order`: the same race through `braid::check`, printing what braid
/// finds (the test above is the form to copy).
fn main() {
    let report = braid::check(|| async { channel_order_body().await }).run();
    match report.failure() {
        Some(failure) => println!("{}\n{failure}", failure.trace),
        None => println!("{:?}", report.outcome),
    }
}
