//! A `File`'s lock for its `&self` operations (`sync_all`, `sync_data`, `set_len`), as tokio's
//! `Mutex<Inner>` that each holds from waiting out the operation in flight to its own end: two
//! of them on one shared file (an `Arc<File>`) run one after the other, so whichever returns
//! first, the write that was in flight is durable by then.
//!
//! Taking a free gate is no scheduling point of its own (tokio's uncontended `lock()` returns
//! at once, and the gate guards nothing but these operations, whose own steps are on the
//! disk), but it is recorded as a write of the gate, so the reductions see two takers as
//! dependent. A taker that finds it held waits; when it is given back, every waiter tries
//! again (a waiter dropped meanwhile, an aborted `sync_all`, has given up its place).

use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::task::{Context, Poll};

use sim::sync::Shared;

use crate::tokio::wait_list::{wake_all, WaitList};

/// The lock (see the module docs).
pub(super) struct Gate {
    state: Shared<GateState>,
}

#[derive(Default)]
struct GateState {
    held: bool,
    waiting: WaitList,
}

/// The engine hashes whether it is held and how many wait.
impl Hash for GateState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.held, self.waiting.len()).hash(state);
    }
}

/// The gate, held until dropped.
pub(super) struct Held<'a>(&'a Gate);

/// A wait for the gate: its place among the waiters, given up if it is dropped first (an
/// aborted `sync_all`), so that a stale waker never takes the next waiter's wake-up.
pub(super) struct Take<'a> {
    gate: &'a Gate,
    ticket: Option<u64>,
}

impl Gate {
    pub(super) fn new() -> Self {
        Gate {
            state: Shared::new(sim::sync::auto_name("file"), GateState::default()),
        }
    }

    /// Takes the gate, waiting while another operation holds it.
    pub(super) fn take(&self) -> Take<'_> {
        Take {
            gate: self,
            ticket: None,
        }
    }
}

impl<'a> Future for Take<'a> {
    type Output = Held<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Held<'a>> {
        let me = self.get_mut();
        let (taken, stale) = me.gate.state.with_mut(|g| match g.held {
            false => {
                g.held = true;
                (true, g.waiting.remove(me.ticket.take()))
            }
            true => (false, g.waiting.register(&mut me.ticket, cx.waker())),
        });
        drop(stale);
        if taken {
            return Poll::Ready(Held(me.gate));
        }
        me.gate
            .state
            .waiting("sync", "held by another of the file's operations");
        Poll::Pending
    }
}

impl Drop for Take<'_> {
    fn drop(&mut self) {
        if self.ticket.is_none() || !sim::engine_running() {
            return;
        }
        let stale = self.gate.state.with_mut(|g| g.waiting.remove(self.ticket));
        drop(stale);
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // A run torn down (its futures dropped after its end) has nobody left to wake.
        if !sim::engine_running() {
            return;
        }
        // Every waiter tries again; the first to run takes it, the others wait anew.
        let waiting = self.0.state.with_mut(|g| {
            g.held = false;
            g.waiting.take_all()
        });
        wake_all(waiting);
    }
}
