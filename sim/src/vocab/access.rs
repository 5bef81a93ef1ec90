//! What each step of a run accessed: the base of the dependency relation that partial-order
//! reduction works from. Recorded flat (one buffer per run) since every step of every DFS run
//! records.

use super::ObjId;

/// One access to an engine object by a step (the operation and the code after it, up to the
/// task's next scheduling point). Two steps are dependent when they access a common object,
/// unless both only read it or both make commuting updates to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The object accessed.
    pub obj: ObjId,
    /// How: a read, a commuting update, or a write.
    pub kind: AccessKind,
}

/// How a step accessed an object: what decides whether two steps on it are dependent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// Only read it: reads commute with reads.
    Read,
    /// An update that commutes with any other update of the same object, though not with a read
    /// or a write of it: a notify's idempotent permit set, a reader entering or leaving a RwLock
    /// (neither enables nor disables another reader).
    Commuting,
    /// Changed it in a way that depends on or decides its value: dependent on every other access.
    Write,
}

impl AccessKind {
    fn join(self, other: AccessKind) -> AccessKind {
        if self == other {
            self
        } else {
            AccessKind::Write
        }
    }
}

impl Access {
    /// Whether the two accesses conflict (the order of the steps making them matters).
    pub fn conflicts(&self, other: &Access) -> bool {
        (self.obj == other.obj && self.kind.conflicts_with(other.kind))
            || self.obj == ObjId::EVERYTHING
            || other.obj == ObjId::EVERYTHING
    }
}

impl AccessKind {
    /// Whether two accesses of the same object with these kinds conflict.
    pub fn conflicts_with(self, other: AccessKind) -> bool {
        !matches!(
            (self, other),
            (AccessKind::Read, AccessKind::Read) | (AccessKind::Commuting, AccessKind::Commuting)
        )
    }
}

/// The accesses of every step of a run, in step order.
#[derive(Clone, Debug, Default)]
pub struct StepAccesses {
    all: Vec<Access>,
    /// Where each step's accesses end in `all`.
    ends: Vec<usize>,
}

impl StepAccesses {
    /// Starts the next step (with no accesses yet).
    pub(crate) fn begin_step(&mut self) {
        self.ends.push(self.all.len());
    }

    /// Records an access by the current step; two accesses of one object join into one.
    pub(crate) fn record(&mut self, obj: ObjId, kind: AccessKind) {
        // Accesses before the first step (the model's setup) are nobody's.
        let Some(open) = self.ends.len().checked_sub(1) else {
            return;
        };
        let start = if open == 0 { 0 } else { self.ends[open - 1] };
        match self.all[start..].iter_mut().find(|a| a.obj == obj) {
            Some(a) => a.kind = a.kind.join(kind),
            None => {
                self.all.push(Access { obj, kind });
                *self.ends.last_mut().expect("a step is open") += 1;
            }
        }
    }

    /// Steps recorded.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no step was recorded.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// What step `i` accessed.
    pub fn step(&self, i: usize) -> &[Access] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.all[start..self.ends[i]]
    }

    /// What the latest step accessed.
    pub fn last(&self) -> &[Access] {
        match self.ends.len() {
            0 => &[],
            n => self.step(n - 1),
        }
    }
}
