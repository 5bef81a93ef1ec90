//! A notify with a single stored permit (tokio's `Notify::notify_one` semantics): a
//! notification with nobody waiting is kept for the next waiter, several coalesce into one.

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::with_exec;
use crate::vocab::ObjId;

/// A notify (see the module docs).
pub struct Notify {
    id: ObjId,
}

impl Notify {
    /// A notify named `name` (in traces), without a permit.
    pub fn new(name: impl Into<crate::Name>) -> Self {
        let id = with_exec(|ex| ex.add_object(name.into(), ObjState::Notify { permit: false }));
        Notify { id }
    }

    /// Wakes one waiter, or stores the permit for the next one if nobody waits.
    pub async fn notify_one(&self) {
        point(Op::Notify(self.id)).await;
        with_exec(|ex| *ex.state_commuting(self.id) = ObjState::Notify { permit: true });
    }

    /// Waits for a notification. A task blocked here with work to do is stuck.
    pub async fn notified(&self) {
        self.wait(false).await
    }

    /// Waits for a notification where waiting forever is fine (nothing left to do).
    pub async fn notified_idle(&self) {
        self.wait(true).await
    }

    async fn wait(&self, idle: bool) {
        point(Op::Notified { n: self.id, idle }).await;
        with_exec(|ex| *ex.state_mut(self.id) = ObjState::Notify { permit: false });
    }
}
