//! The pubsub layer's variants, following the fix history of topic retain on a full subscriber
//! command queue, and the guards that tell them apart — all in one place.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// retain_topic awaits room in a full command queue — while its caller holds the
    /// connection's lifecycle lock.
    BlockingRetain,
    /// retain_topic drops the subscribe hint when the queue is full.
    DropHint,
    /// The fix as merged: a full queue leaves one coalesced wake-up, and the subscriber
    /// subscribes every retained topic it is missing.
    CoalescedReconcile,
}

impl Variant {
    pub const ALL: [Variant; 3] = [
        Variant::BlockingRetain,
        Variant::DropHint,
        Variant::CoalescedReconcile,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::BlockingRetain => "blocking-retain",
            Variant::DropHint => "drop-hint",
            Variant::CoalescedReconcile => "coalesced-reconcile",
        }
    }

    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn guards(self) -> Guards {
        match self {
            Variant::BlockingRetain => Guards {
                full_queue: FullQueue::Wait,
                retain_wakeup: false,
                reconcile_arm: false,
            },
            Variant::DropHint => Guards {
                full_queue: FullQueue::Drop,
                retain_wakeup: false,
                reconcile_arm: false,
            },
            Variant::CoalescedReconcile => Guards {
                full_queue: FullQueue::Coalesce,
                retain_wakeup: true,
                reconcile_arm: true,
            },
        }
    }

    /// The guards this variant has (the buggy variants have none to knock out).
    pub fn guard_names(self) -> &'static [&'static str] {
        match self {
            Variant::CoalescedReconcile => &GUARDS,
            _ => &[],
        }
    }
}

/// The guards of the fixed variant that `braid mutants` knocks out one at a time.
pub const GUARDS: [&str; 2] = ["reconcile-arm", "retain-wakeup"];

/// What distinguishes the variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guards {
    /// What a hint does when the subscriber's command queue is full.
    pub full_queue: FullQueue,
    /// retain_topic past a full queue leaves the coalesced wake-up (notify_one).
    pub retain_wakeup: bool,
    /// The subscriber's select! has the reconcile arm (subscribe every retained topic it is
    /// missing, unsubscribe every released one).
    pub reconcile_arm: bool,
}

impl Guards {
    /// Removes the named guard; false if the variant has no such guard.
    pub fn knock_out(&mut self, guard: &str) -> bool {
        match guard {
            "reconcile-arm" if self.reconcile_arm => {
                self.reconcile_arm = false;
                true
            }
            "retain-wakeup" if self.retain_wakeup => {
                self.retain_wakeup = false;
                true
            }
            _ => false,
        }
    }
}

/// A hint that finds the command queue full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullQueue {
    /// `send().await`: wait for room.
    Wait,
    /// `try_send`, and the hint is lost.
    Drop,
    /// `try_send`; on a full queue, set the coalesced reconcile wake-up.
    Coalesce,
}
