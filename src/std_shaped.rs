//! Shaped like `std`: code written against `std::sync` runs under braid with its imports
//! switched (`use braid::std::sync::atomic::{AtomicUsize, Ordering};`). Each operation is a
//! synchronous scheduling point at access grain: braid's tasks run on stacks of their own, so
//! a load with no `.await` around it can still be preempted right before it.
//!
//! ```
//! use std::sync::Arc;
//! use braid::std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
//!
//! // Two increments as a load then a store: one is lost when the tasks interleave between
//! // the two synchronous accesses.
//! let report = braid::check(|| async {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let m = n.clone();
//!     let t = braid::spawn(async move { let v = m.load(SeqCst); m.store(v + 1, SeqCst) });
//!     let v = n.load(SeqCst);
//!     n.store(v + 1, SeqCst);
//!     t.await.unwrap();
//!     assert_eq!(n.load(SeqCst), 2);
//! })
//! .run();
//! assert!(matches!(report.outcome, braid::Outcome::Failed(_)));
//! ```

/// `std::sync`.
pub mod sync {
    pub use crate::std_sync::{Mutex, MutexGuard, TryLockError};

    /// `std::sync::atomic`: every ordering is taken as `SeqCst` (braid explores
    /// interleavings, not weak-memory reorderings).
    pub mod atomic {
        pub use sim::sync::std_atomic::{
            AtomicBool, AtomicI32, AtomicI64, AtomicIsize, AtomicU16, AtomicU32, AtomicU64,
            AtomicU8, AtomicUsize,
        };
        pub use std::sync::atomic::Ordering;
    }
}
