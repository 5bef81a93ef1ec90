//! The tokio facade is `Send` and `Sync` where tokio is: code written for tokio, with its
//! `Send` bounds (`Arc<Notify>` shared between tasks, a trait whose futures are `Send`, a
//! struct generic over `S: Send + Sync`), builds and runs under braid with only the import
//! switched. Most of this file is checked by the compiler: it does not build if a type or a
//! future below loses `Send` or `Sync`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use braid::tokio::{
    self,
    sync::{
        broadcast, mpsc, oneshot, watch, Mutex, MutexGuard, Notify, OwnedMutexGuard,
        OwnedSemaphorePermit, RwLock, RwLockReadGuard, RwLockWriteGuard, Semaphore,
        SemaphorePermit,
    },
    task::{AbortHandle, JoinError, JoinHandle},
    time,
};

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}
fn is_send<T: Send>(_: &T) {}
fn is_send_sync<T: Send + Sync>(_: &T) {}

/// A payload that is `Send` but not `Sync` (as tokio's bounds are mostly `T: Send`).
struct SendOnly(#[allow(dead_code)] std::cell::Cell<u32>);

/// Every facade type, with the bounds tokio documents.
#[test]
fn the_facade_types_are_send_and_sync_as_tokios() {
    // sync
    send_sync::<Mutex<SendOnly>>();
    send_sync::<MutexGuard<'static, u32>>();
    send::<MutexGuard<'static, SendOnly>>();
    send_sync::<OwnedMutexGuard<u32>>();
    send::<OwnedMutexGuard<SendOnly>>();
    send_sync::<RwLock<u32>>();
    send_sync::<RwLockReadGuard<'static, u32>>();
    send_sync::<RwLockWriteGuard<'static, u32>>();
    send_sync::<Notify>();
    send_sync::<Semaphore>();
    send_sync::<SemaphorePermit<'static>>();
    send_sync::<OwnedSemaphorePermit>();

    // channels: Send + Sync when the message is Send
    send_sync::<mpsc::Sender<SendOnly>>();
    send_sync::<mpsc::Receiver<SendOnly>>();
    send_sync::<mpsc::UnboundedSender<SendOnly>>();
    send_sync::<mpsc::UnboundedReceiver<SendOnly>>();
    send_sync::<mpsc::Permit<'static, SendOnly>>();
    send_sync::<mpsc::OwnedPermit<SendOnly>>();
    send_sync::<oneshot::Sender<SendOnly>>();
    send_sync::<oneshot::Receiver<SendOnly>>();
    send_sync::<broadcast::Sender<SendOnly>>();
    send_sync::<broadcast::Receiver<SendOnly>>();
    // watch, as tokio's: Send + Sync when the value is Send + Sync
    send_sync::<watch::Sender<u32>>();
    send_sync::<watch::Receiver<u32>>();

    // tasks
    send_sync::<JoinHandle<SendOnly>>();
    send_sync::<AbortHandle>();
    send_sync::<JoinError>();

    // time
    send_sync::<time::Sleep>();
    send_sync::<time::Timeout<time::Sleep>>();
    send_sync::<time::Interval>();
    send_sync::<time::Instant>();

    // std-shaped
    send_sync::<braid::std::sync::Mutex<SendOnly>>();
    send_sync::<braid::std::sync::atomic::AtomicUsize>();
    send_sync::<braid::std::sync::atomic::AtomicBool>();

    // braid's own front door
    send_sync::<braid::sync::Mutex<SendOnly>>();
    send_sync::<braid::sync::Notify>();
    send_sync::<braid::sync::mpsc::Sender<u32>>();
    send_sync::<braid::sync::mpsc::Receiver<u32>>();
    send_sync::<braid::task::JoinHandle<SendOnly>>();
}

/// The futures of the async methods are `Send` where tokio's are: checked on real values,
/// inside a run (creating a primitive needs one). Nothing here is awaited twice or left
/// waiting: the futures are only looked at, then dropped.
#[braid::test(runs = 1)]
async fn the_facade_futures_are_send_as_tokios() {
    let mutex = Arc::new(Mutex::new(0u32));
    is_send(&mutex.lock());
    is_send(&mutex.clone().lock_owned());
    {
        let guard = mutex.lock().await;
        is_send(&guard);
    }
    let lock = RwLock::new(0u32);
    is_send(&lock.read());
    is_send(&lock.write());

    let (tx, mut rx) = mpsc::channel::<u32>(1);
    is_send(&tx.send(1));
    is_send(&tx.reserve());
    is_send(&tx.closed());
    is_send(&rx.recv());
    let (utx, mut urx) = mpsc::unbounded_channel::<u32>();
    is_send(&urx.recv());
    drop(utx);

    let (otx, orx) = oneshot::channel::<u32>();
    is_send(&orx);
    drop(otx);

    let (wtx, mut wrx) = watch::channel(0u32);
    is_send(&wrx.changed());
    is_send(&wtx.closed());

    let (btx, mut brx) = broadcast::channel::<u32>(2);
    is_send(&brx.recv());
    drop(btx);

    let sem = Arc::new(Semaphore::new(1));
    is_send(&sem.acquire());
    is_send(&sem.acquire_many(1));
    is_send(&sem.clone().acquire_owned());

    let notify = Notify::new();
    is_send_sync(&notify.notified());

    is_send(&time::sleep(Duration::from_millis(1)));
    is_send(&time::timeout(Duration::from_millis(1), notify.notified()));
    let mut interval = time::interval(Duration::from_millis(1));
    is_send(&interval.tick());

    let handle = tokio::spawn(async { 1u32 });
    is_send(&handle);
    assert_eq!(handle.await.unwrap(), 1);

    is_send(&tokio::task::yield_now());
}

// ---- code written for tokio, with its `Send` bounds ----

/// A storage trait as tokio code writes one: its futures are `Send`, so a multi-threaded
/// runtime may move the tasks that await them.
trait Store: Send + Sync + 'static {
    fn put(&self, v: u32) -> impl Future<Output = ()> + Send;
    fn total(&self) -> impl Future<Output = u32> + Send;
}

/// A store behind the facade's mutex, told of each write through a `Notify`.
struct MemStore {
    values: Mutex<Vec<u32>>,
    written: Arc<Notify>,
}

impl Store for MemStore {
    async fn put(&self, v: u32) {
        self.values.lock().await.push(v);
        self.written.notify_one();
    }

    async fn total(&self) -> u32 {
        self.values.lock().await.iter().sum()
    }
}

/// Generic over the store with tokio's bounds; the spawned futures are checked `Send` (as
/// `tokio::spawn` would require) before they are spawned.
async fn work<S: Store + Send + Sync + 'static>(store: Arc<S>, written: Arc<Notify>) -> u32 {
    let (tx, mut rx) = mpsc::channel::<u32>(1);
    let mut writers = Vec::new();
    for v in [1, 2] {
        let store = store.clone();
        let tx = tx.clone();
        let writer = async move {
            store.put(v).await;
            tx.send(v).await.unwrap();
        };
        is_send(&writer);
        writers.push(tokio::spawn(writer));
    }
    drop(tx);
    let waiter = async move {
        written.notified().await;
    };
    is_send(&waiter);
    let waiter = tokio::spawn(waiter);
    let mut acked = 0;
    while let Some(v) = rx.recv().await {
        acked += v;
    }
    for w in writers {
        w.await.unwrap();
    }
    waiter.await.unwrap();
    assert_eq!(acked, 3);
    store.total().await
}

#[braid::test]
async fn tokio_code_with_send_bounds_runs_under_braid() {
    let written = Arc::new(Notify::new());
    let store = Arc::new(MemStore {
        values: Mutex::new(Vec::new()),
        written: written.clone(),
    });
    assert_eq!(work(store, written).await, 3);
}
