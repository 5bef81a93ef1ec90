//! Crash and restart: a node is a group of tasks that a strategy may kill at any scheduling
//! point (`Check::crashes(n)` bounds how often per run); its init then runs again. State the
//! init captures in a [`Durable`] survives; everything its tasks own is dropped, their locks
//! released, their joins failed. Replay files record each crash as a step of the node's crash
//! task, so shrinking drops the crashes a failure does not need.
//!
//! ```
//! use std::rc::Rc;
//! use braid::node::{self, Durable};
//!
//! // A server that acknowledges before it persists: a crash in between loses an acked write.
//! let report = braid::check(|| async {
//!     let disk = Rc::new(Durable::new("disk", Vec::<u32>::new()));
//!     let acked = Rc::new(braid::std::sync::atomic::AtomicBool::new(false));
//!     let (d, a) = (disk.clone(), acked.clone());
//!     node::start("server", move || {
//!         let (d, a) = (d.clone(), a.clone());
//!         async move {
//!             if a.load(std::sync::atomic::Ordering::SeqCst) { return }
//!             a.store(true, std::sync::atomic::Ordering::SeqCst); // ack
//!             braid::tokio::task::yield_now().await;
//!             d.with_mut(|log| log.push(1)); // persist
//!         }
//!     });
//!     braid::tokio::task::yield_now().await;
//!     braid::tokio::task::yield_now().await;
//!     if acked.load(std::sync::atomic::Ordering::SeqCst) {
//!         braid::tokio::task::yield_now().await;
//!         braid::tokio::task::yield_now().await;
//!     }
//! })
//! .crashes(1)
//! .run();
//! # let _ = report;
//! ```

pub use sim::node::{start, Durable};

/// Seeds `host`'s disk (see `braid::tokio::fs`) with a file, durably, before its tasks use it:
/// each run's disks start empty, and this is how a test gives a host the files it boots from.
/// Its directories are made as needed. Not a scheduling point (setup, as `Durable::new`).
///
/// ```
/// use braid::tokio::fs;
///
/// braid::check(|| async {
///     braid::node::seed_file("db", "/etc/db.conf", b"port = 7000").unwrap();
///     let (tx, rx) = braid::tokio::sync::oneshot::channel();
///     let tx = std::sync::Mutex::new(Some(tx));
///     braid::node::start("db", move || {
///         let tx = tx.lock().unwrap().take();
///         async move {
///             // Seeded durably: there on every boot, crash or not.
///             let conf = fs::read_to_string("/etc/db.conf").await.unwrap();
///             assert_eq!(conf, "port = 7000");
///             if let Some(tx) = tx {
///                 let _ = tx.send(());
///             }
///         }
///     });
///     let _ = rx.await;
/// })
/// .crashes(1)
/// .assert_holds();
/// ```
pub fn seed_file(
    host: &str,
    path: impl AsRef<std::path::Path>,
    contents: impl AsRef<[u8]>,
) -> std::io::Result<()> {
    let path = crate::world::disk::resolve(path.as_ref())?;
    let disk = crate::world::disk::disk_of(host);
    disk.fs.with_mut(|fs| fs.seed(&path, contents.as_ref()))
}
