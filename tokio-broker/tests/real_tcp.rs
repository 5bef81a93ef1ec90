//! The TCP front end and the file store under real tokio (the same source as under braid): on
//! 127.0.0.1 and a temporary directory, c receives and acknowledges every message over TCP,
//! hangs up once before acknowledging one, reconnects, and gets that one re-sent first (DUP);
//! the store, opened again, holds what is still in flight.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_broker::real::broker::{
    Broker, ClientLog, Config, Durability, FileStore, FrontEnd, Msg, ObservedStore, SessionStore,
    TcpClient, Variant,
};

const PUBLISHERS: usize = 3;
const MESSAGES: usize = 20;
/// c hangs up after this many PUBLISHes, before acknowledging the last of them.
const HANG_UP_AFTER: usize = 5;

/// Runs the broker and c until c's log is complete; returns the log and how many connections
/// c made.
async fn broker_and_client(dir: &std::path::Path) -> (ClientLog, usize) {
    let log = Arc::new(Mutex::new(ClientLog::new(PUBLISHERS * MESSAGES)));
    let store = FileStore::open(dir, Durability::Synced)
        .await
        .expect("the store opens");
    // Window 1: each message goes out once the one before is acknowledged (and removed).
    let config = Config::new(Variant::BoundFirst);
    let broker = Broker::new(config, ObservedStore::new(store, log.clone(), 1));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let addr = listener.local_addr().expect("its address").to_string();
    let front_end = tokio::spawn(FrontEnd::new(broker.clone(), 1).serve(listener));
    for publisher in 1..=PUBLISHERS {
        let broker = broker.clone();
        tokio::spawn(async move {
            for seq in 1..=MESSAGES {
                broker.route(Msg::new(publisher, seq)).await;
                tokio::task::yield_now().await;
            }
        });
    }
    let mut client = TcpClient::new(&addr, log.clone());
    client.hang_up_after = Some(HANG_UP_AFTER);
    let connections = client.run().await;
    front_end.abort();
    let log = std::mem::take(&mut *log.lock().unwrap());
    (log, connections)
}

#[test]
fn over_tcp_c_receives_acks_and_reconnects_and_the_store_keeps_what_is_in_flight() {
    let current_thread = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let multi_thread = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for (flavour, rt) in [
        ("current-thread", current_thread),
        ("multi-thread", multi_thread),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (log, connections) = rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), broker_and_client(dir.path()))
                .await
                .expect("every message delivered within 10 s")
        });
        assert!(log.complete(), "{flavour}: {log:?}");
        assert_eq!(connections, 2, "{flavour}: c reconnected once");
        // The message c hung up on came again, DUP, first on the new connection; c gets each
        // of the others once.
        let hung_up_on = log.wire[HANG_UP_AFTER - 1];
        let resent = log.wire[HANG_UP_AFTER];
        assert!(
            resent.dup && resent.id == hung_up_on.id,
            "{flavour}: {:?}",
            &log.wire[..=HANG_UP_AFTER]
        );
        assert_eq!(log.wire.len(), PUBLISHERS * MESSAGES + 1, "{flavour}");
        // c stopped once its log was complete, without acknowledging the last message: the
        // file holds it in flight.
        let unacked = vec![log.wire.last().expect("messages").id];
        let in_flight: Vec<_> = rt.block_on(async {
            let store = FileStore::open(dir.path(), Durability::Synced)
                .await
                .expect("the store opens again");
            store.load_persisted_inflight().await
        });
        let in_flight: Vec<_> = in_flight.iter().map(|m| m.id).collect();
        assert_eq!(in_flight, unacked, "{flavour}");
    }
}
