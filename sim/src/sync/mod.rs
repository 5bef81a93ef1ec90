//! The engine's primitives. Every operation on them is a scheduling point (atomics: at `access`
//! grain), and each keeps the executor informed of whether a parked operation can proceed.

mod atomic;
mod mpsc;
mod mutex;
mod notify;
mod rwlock;
mod shared;
pub mod std_atomic;

pub use atomic::Atomic;
pub use mpsc::{channel, Receiver, Sender, TrySendError};
pub use mutex::{Mutex, MutexGuard};
pub use notify::Notify;
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use shared::Shared;

/// A name for an unnamed object of this kind in the run in progress: `mutex#1`, `mutex#2`, ...
/// (numbered in creation order, so the same in every run that creates them in the same order).
pub fn auto_name(kind: &'static str) -> crate::Name {
    let [name] = auto_names(kind, [""]);
    name
}

/// Names for an unnamed object of this kind and its parts, in the run in progress: the
/// object's `auto_name` followed by each suffix (`auto_names("channel", ["", " senders"])` is
/// `["channel#1", "channel#1 senders"]`). Made once per thread, not per run.
pub fn auto_names<const K: usize>(
    kind: &'static str,
    suffixes: [&'static str; K],
) -> [crate::Name; K] {
    crate::rt::with_exec(|ex| ex.auto_names(kind, suffixes))
}
