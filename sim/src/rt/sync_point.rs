//! Scheduling points inside synchronous code (an atomic load, a `try_send`): the running task
//! parks in the middle of a poll, which only a stackful task can do (see `rt::coroutine`).

use super::access::AccessKind;
use super::op::Op;
use super::task::{sync_point_labeled, Label};
use super::{with_exec, ObjId};
use crate::model::Grain;

/// A scheduling point right before an access of `kind` to `obj`, at access grain.
pub(crate) fn before(obj: ObjId, kind: AccessKind) {
    at_access_grain(Op::Access(obj, kind));
}

/// `before`, the step named `label` in traces ("lock mutex#1").
pub(crate) fn before_as(obj: ObjId, kind: AccessKind, label: Label) {
    labeled_at_access_grain(Op::Access(obj, kind), Some(label));
}

/// A scheduling point on `op` at access grain; at await grain, nothing.
pub(crate) fn at_access_grain(op: Op) {
    labeled_at_access_grain(op, None);
}

fn labeled_at_access_grain(op: Op, label: Option<Label>) {
    if super::coroutine::in_stackful() && with_exec(|ex| ex.grain == Grain::Access) {
        sync_point_labeled(op, label);
    }
}
