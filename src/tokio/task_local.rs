//! `tokio::task_local!` and `tokio::task::LocalKey`: a value set for the duration of a future
//! (`KEY.scope(value, future)`), visible to that future and what it calls.
//!
//! tokio keeps the value in a thread-local while the scoped future is polled. Under braid a
//! task can park in the middle of a poll (tasks run stackful, and every operation on a
//! primitive is a scheduling point) and another task then runs on the same thread, so the
//! value is kept per task instead: set while the scoped future is polled (or dropped), taken
//! back after, for the task that polls it. Reading a task-local is not a scheduling point
//! (no other task can observe it).

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use sim::TaskId;

/// The values of one task-local key, per task.
#[doc(hidden)]
pub struct Slots<T> {
    values: RefCell<Vec<(Option<TaskId>, Rc<T>)>>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots::new()
    }
}

impl<T> Slots<T> {
    /// No values.
    pub const fn new() -> Self {
        Slots {
            values: RefCell::new(Vec::new()),
        }
    }

    fn take(&self, task: Option<TaskId>) -> Option<Rc<T>> {
        let mut values = self.values.borrow_mut();
        let at = values.iter().position(|(t, _)| *t == task)?;
        Some(values.remove(at).1)
    }

    fn put(&self, task: Option<TaskId>, value: Rc<T>) {
        self.values.borrow_mut().push((task, value));
    }

    /// The running task's value, shared (a `with` that parks in the middle holds no borrow of
    /// the slots, so other tasks may scope the key meanwhile).
    fn get(&self, task: Option<TaskId>) -> Option<Rc<T>> {
        let values = self.values.borrow();
        values
            .iter()
            .find(|(t, _)| *t == task)
            .map(|(_, v)| v.clone())
    }
}

/// Declares task-local keys, as `tokio::task_local!`.
///
/// ```
/// use braid::tokio;
///
/// tokio::task_local! {
///     static REQUEST: u32;
/// }
///
/// braid::check(|| async {
///     let a = tokio::spawn(REQUEST.scope(1, async { REQUEST.get() }));
///     let b = tokio::spawn(REQUEST.scope(2, async {
///         tokio::task::yield_now().await;
///         REQUEST.get()
///     }));
///     assert_eq!((a.await.unwrap(), b.await.unwrap()), (1, 2));
///     assert!(REQUEST.try_get().is_err());
/// })
/// .assert_holds();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __braid_tokio_task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__braid_tokio_task_local!(@one $(#[$attr])* $vis $name, $t);
        $crate::__braid_tokio_task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__braid_tokio_task_local!(@one $(#[$attr])* $vis $name, $t);
    };
    (@one $(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::tokio::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __KEY: $crate::tokio::__task_local_private::Slots<$t> =
                    const { $crate::tokio::__task_local_private::Slots::new() };
            }
            $crate::tokio::task::LocalKey { inner: __KEY }
        };
    };
}

/// A task-local key, declared with [`task_local!`](crate::tokio::task_local).
pub struct LocalKey<T: 'static> {
    #[doc(hidden)]
    pub inner: std::thread::LocalKey<Slots<T>>,
}

/// Puts `slot`'s value in for the running task while `f` runs, and takes it back after (even
/// if `f` panics), restoring what was there before.
struct Scope<'a, T: 'static> {
    key: &'static LocalKey<T>,
    slot: &'a mut Option<T>,
    task: Option<TaskId>,
    before: Option<Rc<T>>,
}

impl<'a, T: 'static> Scope<'a, T> {
    fn enter(key: &'static LocalKey<T>, slot: &'a mut Option<T>) -> Self {
        let task = sim::current_task();
        let before = key.inner.with(|s| s.take(task));
        if let Some(v) = slot.take() {
            key.inner.with(|s| s.put(task, Rc::new(v)));
        }
        Scope {
            key,
            slot,
            task,
            before,
        }
    }
}

impl<T: 'static> Drop for Scope<'_, T> {
    fn drop(&mut self) {
        let task = self.task;
        let before = self.before.take();
        let _ = self.key.inner.try_with(|s| {
            // Unshared once every `with` inside the scope has returned.
            *self.slot = s.take(task).and_then(|v| Rc::try_unwrap(v).ok());
            if let Some(v) = before {
                s.put(task, v);
            }
        });
    }
}

impl<T: 'static> LocalKey<T> {
    /// Runs `f` (a future) with the key set to `value`.
    pub fn scope<F: Future>(&'static self, value: T, f: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            key: self,
            slot: Some(value),
            future: Some(f),
        }
    }

    /// Runs `f` with the key set to `value`.
    pub fn sync_scope<F: FnOnce() -> R, R>(&'static self, value: T, f: F) -> R {
        let mut slot = Some(value);
        let _scope = Scope::enter(self, &mut slot);
        f()
    }

    /// Runs `f` on the value.
    ///
    /// # Panics
    /// Outside a scope of this key.
    #[track_caller]
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(_) => panic!("cannot access a task-local storage value without setting it first"),
        }
    }

    /// Runs `f` on the value, or fails outside a scope of this key.
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        let task = sim::current_task();
        let value = self
            .inner
            .try_with(|s| s.get(task))
            .ok()
            .flatten()
            .ok_or(AccessError(()))?;
        Ok(f(&value))
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A copy of the value.
    ///
    /// # Panics
    /// Outside a scope of this key.
    #[track_caller]
    pub fn get(&'static self) -> T {
        self.with(|v| v.clone())
    }

    /// A copy of the value, or fails outside a scope of this key.
    pub fn try_get(&'static self) -> Result<T, AccessError> {
        self.try_with(|v| v.clone())
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("LocalKey { .. }")
    }
}

/// The future of [`LocalKey::scope`].
pub struct TaskLocalFuture<T: 'static, F> {
    key: &'static LocalKey<T>,
    slot: Option<T>,
    future: Option<F>,
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Takes the value out of the scope: the future, polled after, no longer sees it.
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        // SAFETY: `slot` is not structurally pinned.
        unsafe { self.get_unchecked_mut() }.slot.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned (never moved; dropped in place).
        let this = unsafe { self.get_unchecked_mut() };
        let key = this.key;
        let _scope = Scope::enter(key, &mut this.slot);
        let future = this
            .future
            .as_mut()
            .expect("`TaskLocalFuture` polled after completion");
        let future = unsafe { Pin::new_unchecked(future) };
        future.poll(cx)
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        if self.future.is_some() {
            // The future's destructors see the value, as tokio's.
            let key = self.key;
            let _scope = Scope::enter(key, &mut self.slot);
            self.future = None;
        }
    }
}

impl<T: 'static + fmt::Debug, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("value", &self.slot)
            .finish()
    }
}

/// A task-local read outside a scope of its key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AccessError(());

impl fmt::Debug for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessError").finish()
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task-local value not set")
    }
}

impl std::error::Error for AccessError {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::tokio::{self, sync::Notify};

    crate::tokio::task_local! {
        static KEY: u32;
    }

    /// A task that parks in the middle of a poll (at `notify_one`, a synchronous scheduling
    /// point) does not leak its value into the task that runs meanwhile.
    #[test]
    fn values_stay_with_their_task_across_a_park_mid_poll() {
        crate::check(|| async {
            let notify = Arc::new(Notify::new());
            let mut tasks = Vec::new();
            for v in [1u32, 2] {
                let n = notify.clone();
                tasks.push(tokio::spawn(KEY.scope(v, async move {
                    n.notify_one();
                    assert_eq!(KEY.get(), v);
                    n.notify_one();
                    KEY.get()
                })));
            }
            for (t, v) in tasks.into_iter().zip([1u32, 2]) {
                assert_eq!(t.await.unwrap(), v);
            }
            assert!(KEY.try_get().is_err());
        })
        .runs(2_000)
        .assert_holds();
    }
}
