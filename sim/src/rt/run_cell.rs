//! A `RefCell` that handles may share across threads' type bounds (`Send + Sync`, as tokio's
//! are) without a lock's cost on every access: only the run that made it may touch it.
//!
//! A run lives on one thread (its execution is reached through an `Rc`), and one task runs at a
//! time, so checking that the run in progress is the one that made the cell proves that no other
//! thread can be inside it: runs are numbered uniquely in the process. That check is a
//! thread-local read, where a `std::sync::Mutex` costs two atomic read-modify-writes per access,
//! several times a step.

use std::cell::{Ref, RefCell, RefMut};

pub(crate) struct RunCell<T> {
    /// The run that made the cell (see `super::run_id`).
    run: u64,
    value: RefCell<T>,
}

// SAFETY: `value` is reached only through `borrow`/`borrow_mut`, which first check that the run
// in progress on this thread is the one that made the cell. A run is in progress on one thread
// only, and its number is unique in the process, so no two threads are ever inside the
// `RefCell` (its borrow flag included) at once; the guards it hands out are `!Send`. As for
// `Mutex<T>`, sharing it moves `T` between threads at most, hence `T: Send`.
unsafe impl<T: Send> Sync for RunCell<T> {}

impl<T> RunCell<T> {
    /// A cell owned by the run in progress.
    ///
    /// # Panics
    /// When no run is in progress.
    pub(crate) fn new(value: T) -> Self {
        let run = super::run_id();
        assert!(run != 0, "braid object made outside a simulation run");
        RunCell {
            run,
            value: RefCell::new(value),
        }
    }

    pub(crate) fn borrow(&self) -> Ref<'_, T> {
        self.check();
        self.value.borrow()
    }

    pub(crate) fn borrow_mut(&self) -> RefMut<'_, T> {
        self.check();
        self.value.borrow_mut()
    }

    #[inline]
    fn check(&self) {
        assert!(
            super::run_id() == self.run,
            "braid object used outside the run that made it (on another thread, or after its run)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::RunCell;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_and_sync_when_its_value_is_send() {
        assert_send_sync::<RunCell<Vec<u8>>>();
        assert_send_sync::<RunCell<std::cell::Cell<u8>>>();
    }
}
