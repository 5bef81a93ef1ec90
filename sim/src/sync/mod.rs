//! The engine's primitives. Every operation on them is a scheduling point (atomics: at `access`
//! grain), and each keeps the executor informed of whether a parked operation can proceed.

mod atomic;
mod mpsc;
mod mutex;
mod notify;
mod rwlock;
mod shared;

pub use atomic::Atomic;
pub use mpsc::{channel, Receiver, Sender, TrySendError};
pub use mutex::{Mutex, MutexGuard};
pub use notify::Notify;
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use shared::Shared;
