//! A bounded multi-producer, single-consumer channel. `send`, `try_send`, `recv` and `try_recv`
//! are scheduling points; `send` blocks while full, `recv` while empty. `len`/`is_empty` are
//! plain reads, like tokio's.

use std::cell::RefMut;
use std::collections::VecDeque;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::run_cell::RunCell;
use crate::rt::{report_observed, report_value, with_exec};
use crate::vocab::AccessKind;
use crate::vocab::ObjId;

/// The queue sits in a `RunCell` (only its own run touches it, for one statement at a time), so
/// the handles are `Send + Sync` when `T: Send`.
struct Chan<T> {
    id: ObjId,
    cap: usize,
    queue: RunCell<VecDeque<T>>,
}

impl<T> Chan<T> {
    fn queue(&self) -> RefMut<'_, VecDeque<T>> {
        self.queue.borrow_mut()
    }
}

impl<T: Hash> Chan<T> {
    fn observed_len(&self) -> usize {
        with_exec(|ex| ex.access(self.id, AccessKind::Read));
        let len = self.queue().len();
        report_observed(&len);
        len
    }

    /// Tells the engine the queue's new length (and value), from the guard the change was
    /// made under: one borrow per operation.
    fn sync_len(&self, queue: &VecDeque<T>) {
        let (len, cap) = (queue.len(), self.cap);
        report_value(self.id, queue);
        with_exec(|ex| *ex.state_mut(self.id) = ObjState::Channel { len, cap });
    }
}

/// Creates a channel holding at most `capacity` messages.
pub fn channel<T: Hash>(name: impl Into<crate::Name>, capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "a bounded channel needs room for one message");
    let state = ObjState::Channel {
        len: 0,
        cap: capacity,
    };
    let id = with_exec(|ex| ex.add_object(name.into(), state));
    let chan = Arc::new(Chan {
        id,
        cap: capacity,
        queue: RunCell::new(VecDeque::with_capacity(capacity)),
    });
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// The sending half of a channel (see the module docs); clones share the channel.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender {
            chan: self.chan.clone(),
        }
    }
}

/// `try_send` found the channel full; the message comes back.
pub enum TrySendError<T> {
    /// The channel was full.
    Full(T),
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Full(..)")
    }
}

/// A sender is a handle: two are equal in a state when they reach the same channel.
impl<T> Hash for Sender<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.chan.id.hash(state);
    }
}

impl<T: Hash> Sender<T> {
    /// Waits for room, then enqueues.
    pub async fn send(&self, value: T) {
        point(Op::Send(self.chan.id)).await;
        let mut queue = self.chan.queue();
        queue.push_back(value);
        self.chan.sync_len(&queue);
    }

    /// Enqueues if there is room, else hands the message back.
    pub async fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        point(Op::TrySend(self.chan.id)).await;
        let mut queue = self.chan.queue();
        let full = queue.len() >= self.chan.cap;
        report_observed(&full);
        if full {
            with_exec(|ex| {
                ex.access(self.chan.id, AccessKind::Read);
                ex.note_effect(|| "full".to_string());
            });
            return Err(TrySendError::Full(value));
        }
        queue.push_back(value);
        self.chan.sync_len(&queue);
        drop(queue);
        with_exec(|ex| ex.note_effect(|| "sent".to_string()));
        Ok(())
    }

    /// A plain read (no scheduling point), recorded as a read of the channel.
    pub fn len(&self) -> usize {
        self.chan.observed_len()
    }

    /// Whether the channel holds no message (a plain read, as `len`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The receiving half of a channel (see the module docs).
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

impl<T: Hash> Receiver<T> {
    /// Waits for a message. A task blocked here with work to do is stuck.
    pub async fn recv(&self) -> T {
        self.recv_op(false).await
    }

    /// Waits for a message where waiting forever is fine (a server with nothing to do): a run
    /// that ends with the task here is quiescent, not deadlocked.
    pub async fn recv_idle(&self) -> T {
        self.recv_op(true).await
    }

    async fn recv_op(&self, idle: bool) -> T {
        point(Op::Recv {
            ch: self.chan.id,
            idle,
        })
        .await;
        let mut queue = self.chan.queue();
        let value = queue
            .pop_front()
            .expect("recv is enabled only when the channel holds a message");
        report_observed(&value);
        self.chan.sync_len(&queue);
        value
    }

    /// Takes a message if one is there.
    pub async fn try_recv(&self) -> Option<T> {
        point(Op::TryRecv(self.chan.id)).await;
        let mut queue = self.chan.queue();
        let value = queue.pop_front();
        report_observed(&value);
        if value.is_some() {
            self.chan.sync_len(&queue);
        } else {
            with_exec(|ex| {
                ex.access(self.chan.id, AccessKind::Read);
                ex.note_effect(|| "empty".to_string());
            });
        }
        value
    }

    /// A plain read (no scheduling point), recorded as a read of the channel.
    pub fn len(&self) -> usize {
        self.chan.observed_len()
    }

    /// Whether the channel holds no message (a plain read, as `len`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
