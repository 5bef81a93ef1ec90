//! Scheduling points inside synchronous code (an atomic load, a `try_send`): the running task
//! parks in the middle of a poll, which only a stackful task can do.

use super::access::AccessKind;
use super::ObjId;

/// A scheduling point right before an access of `kind` to `obj`.
pub(crate) fn before(_obj: ObjId, _kind: AccessKind) {
    // Filled in by the stackful-task work: until then, not a scheduling point.
}
