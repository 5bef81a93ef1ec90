//! braid-tokio under `--cfg madsim` (the workspace's build): tokio's attributes and macros are
//! braid's. A user names this crate `tokio`; here it is `braid_tokio`, so the attributes say
//! so with tokio's own `crate = "..."` argument.

use std::sync::Arc;

use braid_tokio::sync::{oneshot, Mutex, Notify};

#[braid_tokio::test(crate = "braid_tokio")]
async fn a_test_is_a_braid_exploration() {
    let counter = Arc::new(Mutex::new(0u32));
    let c = counter.clone();
    let task = braid_tokio::spawn(async move { *c.lock().await += 1 });
    *counter.lock().await += 1;
    task.await.unwrap();
    assert_eq!(*counter.lock().await, 2);
}

/// tokio's arguments are accepted; the race behind them is found.
#[braid_tokio::test(crate = "braid_tokio", flavor = "multi_thread", worker_threads = 4)]
#[should_panic(expected = "an update was lost")]
async fn tokio_arguments_are_accepted_and_races_found() {
    let counter = Arc::new(Mutex::new(0u32));
    let c = counter.clone();
    let task = braid_tokio::spawn(async move {
        let v = *c.lock().await;
        *c.lock().await = v + 1;
    });
    let v = *counter.lock().await;
    *counter.lock().await = v + 1;
    task.await.unwrap();
    assert_eq!(*counter.lock().await, 2, "an update was lost");
}

/// braid's settings too, and a `Result` return.
#[braid_tokio::test(crate = "braid_tokio", runs = 50, strategy = "random", seed = 3)]
async fn a_test_may_return_a_result() -> Result<(), oneshot::error::RecvError> {
    let (tx, rx) = oneshot::channel();
    braid_tokio::spawn(async move { tx.send(5).unwrap() });
    assert_eq!(rx.await?, 5);
    Ok(())
}

#[braid_tokio::test(crate = "braid_tokio")]
#[should_panic(expected = "the test returned Err")]
async fn an_err_fails_the_run() -> Result<(), String> {
    Err("no".to_string())
}

#[braid_tokio::test(crate = "braid_tokio")]
async fn join_select_and_pin_are_there() {
    let notify = Arc::new(Notify::new());
    let n = notify.clone();
    let (a, b) = braid_tokio::join!(async { 1 }, async move {
        n.notify_one();
        2
    });
    assert_eq!(a + b, 3);
    let wait = notify.notified();
    braid_tokio::pin!(wait);
    let got = braid_tokio::select! {
        _ = &mut wait => "notified",
        _ = braid_tokio::time::sleep(std::time::Duration::from_secs(1)) => "slept",
    };
    assert_eq!(got, "notified", "the permit was stored");
    let r: Result<(u8, u8), ()> = braid_tokio::try_join!(async { Ok(1) }, async { Ok(2) });
    assert_eq!(r, Ok((1, 2)));
}

/// `#[tokio::main]` runs its body once under braid.
#[braid_tokio::main(crate = "braid_tokio", flavor = "current_thread")]
async fn program() {
    let task = braid_tokio::spawn(async { 7 });
    assert_eq!(task.await.unwrap(), 7);
}

#[test]
fn main_runs_its_body_once() {
    program();
}

#[braid_tokio::main(crate = "braid_tokio")]
async fn failing_program() {
    panic!("the program failed");
}

#[test]
#[should_panic(expected = "the program failed")]
fn a_failing_main_panics_with_the_report() {
    failing_program();
}

/// tokio's `net`, `fs` and `io` paths are braid's simulated network and disk.
#[braid_tokio::test(crate = "braid_tokio", network_faults = 1)]
#[should_panic(expected = "a reset")]
async fn net_fs_and_io_are_there_and_faults_explored() {
    use braid_tokio::io::{AsyncReadExt, AsyncWriteExt};
    braid_tokio::fs::write("/greeting", b"hello").await.unwrap();
    let listener = braid_tokio::net::TcpListener::bind("0.0.0.0:80")
        .await
        .unwrap();
    let server = braid_tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let greeting = braid_tokio::fs::read("/greeting").await.unwrap();
        let _ = s.write_all(&greeting).await;
    });
    let mut client = braid_tokio::net::TcpStream::connect("localhost:80")
        .await
        .unwrap();
    let mut got = String::new();
    let read = client.read_to_string(&mut got).await;
    assert!(read.is_ok(), "a reset: {read:?}");
    assert_eq!(got, "hello");
    server.await.unwrap();
}
