//! Wakers of tasks waiting on one condition, kept in the order they first waited (never a
//! hash map's order: which task the engine may run next must not depend on addresses). Each
//! waiting future holds a ticket; a re-poll replaces its waker, a drop removes it.

use std::task::Waker;

/// The wakers waiting for one condition.
#[derive(Default)]
pub(crate) struct WaitList {
    next: u64,
    waiting: Vec<(u64, Waker)>,
}

impl WaitList {
    /// Registers (or re-registers) the waker of the future holding `ticket`, issuing a ticket
    /// the first time. Returns the waker it replaced, to be dropped once the state is no
    /// longer borrowed: a waker's drop may reach the same state again (tokio allows it).
    #[must_use = "drop the replaced waker outside the state's borrow"]
    pub(crate) fn register(&mut self, ticket: &mut Option<u64>, waker: &Waker) -> Option<Waker> {
        match *ticket {
            Some(t) => match self.waiting.iter_mut().find(|(id, _)| *id == t) {
                Some((_, w)) if w.will_wake(waker) => None,
                Some((_, w)) => Some(std::mem::replace(w, waker.clone())),
                None => {
                    self.waiting.push((t, waker.clone()));
                    None
                }
            },
            None => {
                let t = self.next;
                self.next += 1;
                *ticket = Some(t);
                self.waiting.push((t, waker.clone()));
                None
            }
        }
    }

    /// Forgets the waker of `ticket` (its future is dropped), returning it to be dropped once
    /// the state is no longer borrowed (see `register`).
    #[must_use = "drop the removed waker outside the state's borrow"]
    pub(crate) fn remove(&mut self, ticket: Option<u64>) -> Option<Waker> {
        let t = ticket?;
        let at = self.waiting.iter().position(|(id, _)| *id == t)?;
        Some(self.waiting.remove(at).1)
    }

    /// Takes every waker, in waiting order, to be woken once the state is no longer borrowed.
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        self.waiting.drain(..).map(|(_, w)| w).collect()
    }

    /// How many wait.
    pub(crate) fn len(&self) -> usize {
        self.waiting.len()
    }
}

/// Wakes them all.
pub(crate) fn wake_all(wakers: Vec<Waker>) {
    for w in wakers {
        w.wake();
    }
}
