//! Synchronisation shaped like `tokio::sync`. Every operation that can wait is a scheduling
//! point: braid may run any other task right before it.

pub use sim::sync::MutexGuard;

/// An async mutex, like `tokio::sync::Mutex`: `lock().await` is a scheduling point and waits
/// while another task holds the lock; dropping the guard releases it.
///
/// ```
/// use std::sync::Arc;
///
/// braid::check(|| async {
///     let counter = Arc::new(braid::sync::Mutex::new(0));
///     let c = counter.clone();
///     let task = braid::spawn(async move { *c.lock().await += 1 });
///     *counter.lock().await += 1;
///     task.await.unwrap();
///     assert_eq!(*counter.lock().await, 2);
/// })
/// .assert_holds();
/// ```
pub struct Mutex<T> {
    inner: sim::sync::Mutex<T>,
}

impl<T> Mutex<T> {
    /// A mutex named `mutex#1`, `mutex#2`, ... in traces, in creation order.
    pub fn new(value: T) -> Self {
        Mutex {
            inner: sim::sync::Mutex::opaque(sim::sync::auto_name("mutex"), value),
        }
    }

    /// A mutex with a name of its own for traces (`Mutex::named("counter", 0)`).
    pub fn named(name: impl Into<sim::Name>, value: T) -> Self {
        Mutex {
            inner: sim::sync::Mutex::opaque(name, value),
        }
    }

    /// Waits for the lock (a scheduling point) and returns its guard.
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        self.inner.lock().await
    }
}

/// Wakes a waiting task, like `tokio::sync::Notify`: `notify_one` stores a permit when no task
/// waits, and `notified().await` consumes it.
///
/// ```
/// use std::sync::Arc;
///
/// braid::check(|| async {
///     let ready = Arc::new(braid::sync::Notify::new());
///     let r = ready.clone();
///     let waiter = braid::spawn(async move { r.notified().await });
///     ready.notify_one().await;
///     waiter.await.unwrap();
/// })
/// .assert_holds();
/// ```
pub struct Notify {
    inner: sim::sync::Notify,
}

impl Notify {
    /// A notify named `notify#1`, `notify#2`, ... in traces.
    pub fn new() -> Self {
        Notify {
            inner: sim::sync::Notify::new(sim::sync::auto_name("notify")),
        }
    }

    /// A notify with a name of its own for traces.
    pub fn named(name: impl Into<sim::Name>) -> Self {
        Notify {
            inner: sim::sync::Notify::new(name),
        }
    }

    /// Stores a permit or wakes a waiter (a scheduling point).
    pub async fn notify_one(&self) {
        self.inner.notify_one().await
    }

    /// Waits for a permit and consumes it (a scheduling point).
    pub async fn notified(&self) {
        self.inner.notified().await
    }
}

impl Default for Notify {
    fn default() -> Self {
        Notify::new()
    }
}

/// A bounded channel, like `tokio::sync::mpsc`: `send` waits while it is full, `recv` while it
/// is empty, and both are scheduling points.
pub mod mpsc {
    use std::hash::Hash;

    pub use sim::sync::{Receiver, Sender, TrySendError};

    /// A channel of `capacity` messages, named `channel#1`, ... in traces.
    ///
    /// ```
    /// braid::check(|| async {
    ///     let (tx, rx) = braid::sync::mpsc::channel(2);
    ///     tx.send(1u32).await;
    ///     tx.send(2u32).await;
    ///     assert_eq!(rx.recv().await, 1);
    /// })
    /// .assert_holds();
    /// ```
    pub fn channel<T: Hash>(capacity: usize) -> (Sender<T>, Receiver<T>) {
        sim::sync::channel(sim::sync::auto_name("channel"), capacity)
    }

    /// A channel with a name of its own for traces.
    pub fn named_channel<T: Hash>(
        name: impl Into<sim::Name>,
        capacity: usize,
    ) -> (Sender<T>, Receiver<T>) {
        sim::sync::channel(name, capacity)
    }
}
