//! `tokio::sync::OnceCell`: a value set at most once, by `set` or by the first
//! `get_or_init` whose initializer completes. Initializers run one at a time: the others wait
//! (storing their wakers), and if the running one is dropped (cancelled), the next tries.
//! Every look at the cell and every change is a scheduling point.

use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;
use std::task::Poll;

use sim::sync::Shared;

use super::wait_list::{wake_all, WaitList};

const EMPTY: u8 = 0;
const INITIALIZING: u8 = 1;
const SET: u8 = 2;

struct Core {
    state: u8,
    waiters: WaitList,
}

impl Hash for Core {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.state.hash(state);
        self.waiters.len().hash(state);
    }
}

/// A value set at most once, as `tokio::sync::OnceCell` (named `once_cell#1`, ... in traces).
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::OnceCell};
///
/// braid::check(|| async {
///     let cell = Arc::new(OnceCell::new());
///     let c = cell.clone();
///     let other = tokio::spawn(async move { *c.get_or_init(|| async { 1 }).await });
///     let mine = *cell.get_or_init(|| async { 2 }).await;
///     // Whichever initializer ran first, both see the same value.
///     assert_eq!(mine, other.await.unwrap());
/// })
/// .assert_holds();
/// ```
pub struct OnceCell<T> {
    state: Shared<Core>,
    value: OnceLock<T>,
}

impl<T> OnceCell<T> {
    /// An empty cell.
    pub fn new() -> Self {
        Self::new_with(None)
    }

    /// A cell holding `value`, if any.
    pub fn new_with(value: Option<T>) -> Self {
        let cell = OnceLock::new();
        let state = match value {
            Some(v) => {
                let _ = cell.set(v);
                SET
            }
            None => EMPTY,
        };
        OnceCell {
            state: Shared::new(
                sim::sync::auto_name("once_cell"),
                Core {
                    state,
                    waiters: WaitList::default(),
                },
            ),
            value: cell,
        }
    }

    /// Whether the value is set.
    pub fn initialized(&self) -> bool {
        self.state.read_point();
        self.state.with(|c| c.state == SET)
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        match self.initialized() {
            true => self.value.get(),
            false => None,
        }
    }

    /// The value, if set (no other task can look at it meanwhile).
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.value.get_mut()
    }

    /// Sets the value, or gives it back: the cell is already set, or an initializer is running.
    pub fn set(&self, value: T) -> Result<(), SetError<T>> {
        self.state.write_point();
        let state = self.state.with_mut(|c| {
            let was = c.state;
            if was == EMPTY {
                c.state = SET;
            }
            was
        });
        match state {
            EMPTY => {
                let _ = self.value.set(value);
                let wakers = self.state.with_mut(|c| c.waiters.take_all());
                wake_all(wakers);
                Ok(())
            }
            SET => Err(SetError::AlreadyInitializedError(value)),
            _ => Err(SetError::InitializingError(value)),
        }
    }

    /// The value, running `f` to set it first if no one has: one initializer runs at a time,
    /// and one that is dropped before it completes lets the next waiting call try.
    pub async fn get_or_init<F, Fut>(&self, f: F) -> &T
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        match self
            .get_or_try_init(|| async { Ok::<T, std::convert::Infallible>(f().await) })
            .await
        {
            Ok(v) => v,
            Err(e) => match e {},
        }
    }

    /// As [`get_or_init`](Self::get_or_init), with an initializer that can fail: an error
    /// leaves the cell empty (the next waiting call tries) and is returned.
    pub async fn get_or_try_init<E, F, Fut>(&self, f: F) -> Result<&T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let won = Turn {
            cell: self,
            ticket: None,
        }
        .await;
        if !won {
            return Ok(self.value.get().expect("a set cell's value"));
        }
        let mut init = InitGuard {
            cell: self,
            done: false,
        };
        let result = f().await;
        init.done = true;
        match result {
            Ok(value) => {
                let _ = self.value.set(value);
                self.state.write_point();
                let wakers = self.state.with_mut(|c| {
                    c.state = SET;
                    c.waiters.take_all()
                });
                wake_all(wakers);
                Ok(self.value.get().expect("a set cell's value"))
            }
            Err(e) => {
                init.reset();
                Err(e)
            }
        }
    }

    /// The value, if set.
    pub fn into_inner(self) -> Option<T> {
        self.value.into_inner()
    }

    /// Takes the value, leaving the cell empty.
    pub fn take(&mut self) -> Option<T> {
        let value = self.value.take();
        if value.is_some() {
            self.state.with_mut(|c| c.state = EMPTY);
        }
        value
    }
}

/// Waits for the turn to initialize: `true` when it is this call's, `false` when the cell is
/// set. Dropped while waiting, it leaves the wait list.
struct Turn<'a, T> {
    cell: &'a OnceCell<T>,
    ticket: Option<u64>,
}

impl<T> Future for Turn<'_, T> {
    type Output = bool;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<bool> {
        let this = &mut *self;
        let state = &this.cell.state;
        state.write_point();
        let ticket = &mut this.ticket;
        let mut stale = None;
        let ready = state.with_mut(|c| match c.state {
            SET => {
                stale = c.waiters.remove(ticket.take());
                Poll::Ready(false)
            }
            EMPTY => {
                stale = c.waiters.remove(ticket.take());
                c.state = INITIALIZING;
                Poll::Ready(true)
            }
            _ => {
                stale = c.waiters.register(ticket, cx.waker());
                Poll::Pending
            }
        });
        // Outside the state's borrow: a waker's drop may reach this cell again.
        drop(stale);
        ready
    }
}

impl<T> Drop for Turn<'_, T> {
    fn drop(&mut self) {
        if self.ticket.is_some() && sim::engine_running() {
            let ticket = self.ticket.take();
            self.cell.state.with_mut(|c| c.waiters.remove(ticket));
        }
    }
}

/// Gives the turn to the next initializer if this one is dropped before it completes.
struct InitGuard<'a, T> {
    cell: &'a OnceCell<T>,
    done: bool,
}

impl<T> InitGuard<'_, T> {
    fn reset(&mut self) {
        self.done = true;
        self.cell.state.write_point();
        let wakers = self.cell.state.with_mut(|c| {
            c.state = EMPTY;
            c.waiters.take_all()
        });
        wake_all(wakers);
    }
}

impl<T> Drop for InitGuard<'_, T> {
    fn drop(&mut self) {
        if !self.done && sim::engine_running() {
            self.reset();
        }
    }
}

impl<T> Default for OnceCell<T> {
    fn default() -> Self {
        OnceCell::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnceCell")
            .field("value", &self.value.get())
            .finish()
    }
}

impl<T: PartialEq> PartialEq for OnceCell<T> {
    fn eq(&self, other: &OnceCell<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> Self {
        OnceCell::new_with(Some(value))
    }
}

/// Why [`OnceCell::set`] gave the value back.
#[derive(Debug, PartialEq, Eq)]
pub enum SetError<T> {
    /// The cell was already set.
    AlreadyInitializedError(T),
    /// An initializer was running.
    InitializingError(T),
}

impl<T> SetError<T> {
    /// Whether the cell was already set.
    pub fn is_already_init_err(&self) -> bool {
        matches!(self, SetError::AlreadyInitializedError(_))
    }

    /// Whether an initializer was running.
    pub fn is_initializing_err(&self) -> bool {
        matches!(self, SetError::InitializingError(_))
    }
}

impl<T> fmt::Display for SetError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::AlreadyInitializedError(_) => f.write_str("AlreadyInitializedError"),
            SetError::InitializingError(_) => f.write_str("InitializingError"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for SetError<T> {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::tokio::{self, sync::OnceCell};

    /// An initializer that is cancelled lets the next one run; `set` during an initializer
    /// fails with `InitializingError`.
    #[test]
    fn cancelled_initializer_passes_the_turn() {
        crate::check(|| async {
            let cell = Arc::new(OnceCell::new());
            let c = cell.clone();
            let stuck =
                tokio::spawn(async move { *c.get_or_init(std::future::pending::<u32>).await });
            let c = cell.clone();
            let other = tokio::spawn(async move { *c.get_or_init(|| async { 2 }).await });
            if let Err(e) = cell.set(3) {
                assert!(e.is_initializing_err() || e.is_already_init_err());
            }
            stuck.abort();
            let got = other.await.unwrap();
            assert!(got == 2 || got == 3);
            assert_eq!(cell.get(), Some(&got));
        })
        .runs(2_000)
        .assert_holds();
    }
}
