//! A history of calls as the service's clients saw them: each call's invocation and response,
//! in the order they happened. Recorded under a plain `std::sync::Mutex`, which is no
//! scheduling point: recording adds no step and hides none.

use std::sync::{Arc, Mutex, PoisonError};

/// One call: who made it, the operation, and what it returned (`None`: it never returned).
/// `invoked` and `returned` are positions in the history's one sequence of events.
#[derive(Clone, Debug)]
pub struct Call<Op, Ret> {
    /// Who made it (a task's or client's name), for the counterexample.
    pub client: String,
    /// The operation invoked.
    pub op: Op,
    /// What it returned, if it did.
    pub ret: Option<Ret>,
    /// Its invocation's position among the history's events.
    pub invoked: usize,
    /// Its response's position, if it returned.
    pub returned: Option<usize>,
}

/// A call made, to respond to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallId(usize);

/// The history: cheap to clone (shared), so each client task records into the same one.
pub struct History<Op, Ret> {
    inner: Arc<Mutex<Inner<Op, Ret>>>,
}

struct Inner<Op, Ret> {
    calls: Vec<Call<Op, Ret>>,
    events: usize,
}

impl<Op, Ret> Clone for History<Op, Ret> {
    fn clone(&self) -> Self {
        History {
            inner: self.inner.clone(),
        }
    }
}

impl<Op: Clone, Ret: Clone> Default for History<Op, Ret> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Op: Clone, Ret: Clone> History<Op, Ret> {
    /// An empty history.
    pub fn new() -> Self {
        History {
            inner: Arc::new(Mutex::new(Inner {
                calls: Vec::new(),
                events: 0,
            })),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner<Op, Ret>) -> R) -> R {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// `client` invokes `op`: record it right before the call.
    pub fn invoke(&self, client: impl Into<String>, op: Op) -> CallId {
        self.with(|h| {
            h.events += 1;
            h.calls.push(Call {
                client: client.into(),
                op,
                ret: None,
                invoked: h.events,
                returned: None,
            });
            CallId(h.calls.len() - 1)
        })
    }

    /// The call returned `ret`: record it right after the call.
    ///
    /// # Panics
    /// If the call already returned.
    pub fn respond(&self, call: CallId, ret: Ret) {
        self.with(|h| {
            h.events += 1;
            let c = &mut h.calls[call.0];
            assert!(c.returned.is_none(), "call {} responded twice", call.0);
            c.ret = Some(ret);
            c.returned = Some(h.events);
        });
    }

    /// The calls so far, in invocation order.
    pub fn calls(&self) -> Vec<Call<Op, Ret>> {
        self.with(|h| h.calls.clone())
    }
}
