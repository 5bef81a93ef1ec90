//! A `File`'s lock for its `&self` operations (`sync_all`, `sync_data`, `set_len`), as tokio's
//! `Mutex<Inner>` that each holds from waiting out the operation in flight to its own end: two
//! of them on one shared file (an `Arc<File>`) run one after the other, so whichever returns
//! first, the write that was in flight is durable by then.
//!
//! Taking a free gate is no scheduling point of its own (tokio's uncontended `lock()` returns
//! at once, and the gate guards nothing but these operations, whose own steps are on the
//! disk), but it is recorded as a write of the gate, so the reductions see two takers as
//! dependent. A taker that finds it held waits, woken in turn when it is given back.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::hash::{Hash, Hasher};
use std::task::{Poll, Waker};

use sim::sync::Shared;

/// The lock (see the module docs).
pub(super) struct Gate {
    state: Shared<GateState>,
}

#[derive(Default)]
struct GateState {
    held: bool,
    waiting: VecDeque<Waker>,
}

/// The engine hashes whether it is held and how many wait.
impl Hash for GateState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.held, self.waiting.len()).hash(state);
    }
}

/// The gate, held until dropped.
pub(super) struct Held<'a>(&'a Gate);

impl Gate {
    pub(super) fn new() -> Self {
        Gate {
            state: Shared::new(sim::sync::auto_name("file"), GateState::default()),
        }
    }

    /// Takes the gate, waiting while another operation holds it.
    pub(super) async fn take(&self) -> Held<'_> {
        poll_fn(|cx| {
            let taken = self.state.with_mut(|g| match g.held {
                false => {
                    g.held = true;
                    true
                }
                true => {
                    g.waiting.push_back(cx.waker().clone());
                    false
                }
            });
            if taken {
                return Poll::Ready(());
            }
            self.state
                .waiting("sync", "held by another of the file's operations");
            Poll::Pending
        })
        .await;
        Held(self)
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // A run torn down (its futures dropped after its end) has nobody left to wake.
        if !sim::engine_running() {
            return;
        }
        let next = self.0.state.with_mut(|g| {
            g.held = false;
            g.waiting.pop_front()
        });
        if let Some(waker) = next {
            waker.wake();
        }
    }
}
