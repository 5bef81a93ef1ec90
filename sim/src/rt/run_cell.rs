//! A `RefCell` that handles may share across threads' type bounds (`Send + Sync`, as tokio's
//! are) without a lock's cost on every access: only the run that made it may touch it.
//!
//! A run's execution lives on one thread (it is reached through an `Rc`), and one task runs at
//! a time, so checking that the current execution is the one that made the cell proves that no
//! other thread can be inside it: two live executions never share an address. That check is a
//! thread-local read, where a `std::sync::Mutex` costs two atomic read-modify-writes per access,
//! several times a step.

use std::cell::{Ref, RefCell, RefMut};

pub(crate) struct RunCell<T> {
    /// The execution that made the cell (see `super::run_id`).
    run: usize,
    value: RefCell<T>,
}

// SAFETY: `value` is reached only through `borrow`/`borrow_mut`, which first check that this
// thread's current execution is the one that made the cell. An execution is current on one
// thread only, and no two live executions share an address, so no two threads are ever inside
// the `RefCell` (its borrow flag included) at once; the guards it hands out are `!Send`. As
// for `Mutex<T>`, sharing it moves `T` between threads at most, hence `T: Send`.
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
