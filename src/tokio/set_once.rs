//! `tokio::sync::SetOnce`: a value set at most once, and a `wait` that completes once it is.
//! Setting and looking are scheduling points; a waiter stores its waker and returns
//! `Pending`, as tokio's.

use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use sim::sync::Shared;

use super::wait_list::{wake_all, WaitList};

struct Core {
    set: bool,
    waiters: WaitList,
}

impl Hash for Core {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.set.hash(state);
        self.waiters.len().hash(state);
    }
}

/// A value set at most once, that tasks can wait for, as `tokio::sync::SetOnce` (named
/// `set_once#1`, ... in traces).
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::SetOnce};
///
/// braid::check(|| async {
///     let config = Arc::new(SetOnce::new());
///     let c = config.clone();
///     let reader = tokio::spawn(async move { *c.wait().await });
///     config.set(7).unwrap();
///     assert!(config.set(8).is_err());
///     assert_eq!(reader.await.unwrap(), 7);
/// })
/// .assert_holds();
/// ```
pub struct SetOnce<T> {
    state: Shared<Core>,
    value: OnceLock<T>,
}

impl<T> SetOnce<T> {
    /// An empty one.
    pub fn new() -> Self {
        Self::new_with(None)
    }

    /// One holding `value`, if any.
    pub fn new_with(value: Option<T>) -> Self {
        let cell = OnceLock::new();
        let set = match value {
            Some(v) => {
                let _ = cell.set(v);
                true
            }
            None => false,
        };
        SetOnce {
            state: Shared::new(
                sim::sync::auto_name("set_once"),
                Core {
                    set,
                    waiters: WaitList::default(),
                },
            ),
            value: cell,
        }
    }

    /// Whether the value is set.
    pub fn initialized(&self) -> bool {
        self.state.read_point();
        self.state.with(|c| c.set)
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        match self.initialized() {
            true => self.value.get(),
            false => None,
        }
    }

    /// Sets the value and wakes every waiter, or gives it back if it is already set.
    pub fn set(&self, value: T) -> Result<(), SetOnceError<T>> {
        self.state.write_point();
        let wakers = self.state.with_mut(|c| {
            if c.set {
                return None;
            }
            c.set = true;
            Some(c.waiters.take_all())
        });
        match wakers {
            None => Err(SetOnceError(value)),
            Some(wakers) => {
                let _ = self.value.set(value);
                wake_all(wakers);
                Ok(())
            }
        }
    }

    /// The value, if set.
    pub fn into_inner(self) -> Option<T> {
        self.value.into_inner()
    }

    /// Waits until the value is set, and returns it.
    pub fn wait(&self) -> SetOnceWait<'_, T> {
        SetOnceWait {
            cell: self,
            ticket: None,
        }
    }
}

/// The future of [`SetOnce::wait`]: dropped while it waits, it leaves the wait list.
#[must_use = "futures do nothing unless awaited"]
pub struct SetOnceWait<'a, T> {
    cell: &'a SetOnce<T>,
    ticket: Option<u64>,
}

impl<'a, T> Future for SetOnceWait<'a, T> {
    type Output = &'a T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'a T> {
        let this = &mut *self;
        let cell = this.cell;
        cell.state.write_point();
        let ticket = &mut this.ticket;
        let mut stale = None;
        let set = cell.state.with_mut(|c| {
            if c.set {
                stale = c.waiters.remove(ticket.take());
                return true;
            }
            stale = c.waiters.register(ticket, cx.waker());
            false
        });
        // Outside the state's borrow: a waker's drop may reach this cell again.
        drop(stale);
        match set {
            true => Poll::Ready(cell.value.get().expect("a set value")),
            false => Poll::Pending,
        }
    }
}

impl<T> Drop for SetOnceWait<'_, T> {
    fn drop(&mut self) {
        if self.ticket.is_some() && sim::engine_running() {
            let ticket = self.ticket.take();
            self.cell.state.with_mut(|c| c.waiters.remove(ticket));
        }
    }
}

impl<T> Default for SetOnce<T> {
    fn default() -> Self {
        SetOnce::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for SetOnce<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetOnce")
            .field("value", &self.value.get())
            .finish()
    }
}

impl<T: PartialEq> PartialEq for SetOnce<T> {
    fn eq(&self, other: &SetOnce<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T> From<T> for SetOnce<T> {
    fn from(value: T) -> Self {
        SetOnce::new_with(Some(value))
    }
}

/// The value [`SetOnce::set`] gave back: it was already set.
#[derive(Debug, PartialEq, Eq)]
pub struct SetOnceError<T>(pub T);

impl<T> fmt::Display for SetOnceError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetOnceError")
    }
}

impl<T: fmt::Debug> std::error::Error for SetOnceError<T> {}
