//! What a task parked at a scheduling point is waiting to do, and whether it can do it now.

use std::fmt;

use crate::digest::mix;
use crate::vocab::ObjId;

/// The operation a task performs when it is next granted the baton.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Start,
    Yield(&'static str),
    Choose(usize),
    Lock(ObjId),
    ReadLock(ObjId),
    WriteLock(ObjId),
    Send(ObjId),
    TrySend(ObjId),
    Recv {
        ch: ObjId,
        idle: bool,
    },
    TryRecv(ObjId),
    Notify(ObjId),
    Notified {
        n: ObjId,
        idle: bool,
    },
    Atomic(ObjId, AtomicOp),
    /// Await another task's end (its `JoinHandle`): enabled once that task has finished.
    Join(ObjId),
    /// The task's future returned `Pending` without parking at a scheduling point (it waits on
    /// a waker: a oneshot, a timer, a select): enabled once something wakes it. The object is
    /// the task's wake-up, which the waking step writes.
    Blocked(ObjId),
    /// A node's crash (its crash task's step): enabled while the run's crash budget lasts and
    /// another task can run (see `node`).
    Crash(ObjId),
    /// A jump of virtual time to the next deadline while tasks can still run (the clock task's
    /// step): enabled while the run's clock-jump budget lasts, a timer is pending and another
    /// task can run (see `Execution::enable_clock_jump`).
    ClockJump(ObjId),
    /// A fault the strategy may inject at a fault site (a connection reset, a partition; see
    /// `sim::fault`): enabled while the site is armed, the run's fault budget lasts and another
    /// task can run. Like a crash, it counts as a preemption.
    Fault(ObjId),
    /// A synchronous access to a shared object (`sync::Shared::read_point`), at access grain.
    Access(ObjId, crate::vocab::AccessKind),
    /// A fair yield (`task::yield_now`): "let the others run". The task is not picked again
    /// until every task enabled when it yielded has taken a step or stopped being enabled.
    YieldNow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum AtomicOp {
    Load,
    Store,
    CompareExchange,
    FetchAdd,
    FetchSub,
}

impl Op {
    /// The object the operation touches, if any (the base of the dependency relation).
    pub(crate) fn object(self) -> Option<ObjId> {
        match self {
            Op::Start | Op::Yield(_) | Op::YieldNow | Op::Choose(_) => None,
            Op::Lock(o)
            | Op::ReadLock(o)
            | Op::WriteLock(o)
            | Op::Send(o)
            | Op::TrySend(o)
            | Op::TryRecv(o)
            | Op::Notify(o)
            | Op::Atomic(o, _)
            | Op::Join(o)
            | Op::Access(o, _)
            | Op::Crash(o)
            | Op::ClockJump(o)
            | Op::Fault(o)
            | Op::Blocked(o) => Some(o),
            Op::Recv { ch, .. } => Some(ch),
            Op::Notified { n, .. } => Some(n),
        }
    }

    /// A wait that a server may sit in forever without being stuck (it has no work to do).
    pub(crate) fn is_idle_wait(self) -> bool {
        matches!(
            self,
            Op::Recv { idle: true, .. }
                | Op::Notified { idle: true, .. }
                | Op::Crash(_)
                | Op::ClockJump(_)
                | Op::Fault(_)
        )
    }

    /// The strategy's intervention, never what a task asked for (a crash, a clock jump, a
    /// fault): never the default pick, never a task to be fair to, always a preemption.
    pub(crate) fn is_intervention(self) -> bool {
        matches!(self, Op::Crash(_) | Op::ClockJump(_) | Op::Fault(_))
    }

    pub(crate) fn code(self) -> u64 {
        match self {
            Op::Start => 1,
            Op::Yield(_) => 2,
            Op::Choose(_) => 3,
            Op::Lock(_) => 4,
            Op::ReadLock(_) => 5,
            Op::WriteLock(_) => 6,
            Op::Send(_) => 7,
            Op::TrySend(_) => 8,
            Op::Recv { .. } => 9,
            Op::TryRecv(_) => 10,
            Op::Notify(_) => 11,
            Op::Notified { .. } => 12,
            Op::Atomic(_, a) => 13 + a as u64,
            Op::Join(_) => 18,
            Op::YieldNow => 19,
            Op::Blocked(_) => 20,
            Op::Access(_, kind) => 21 + kind as u64,
            Op::Crash(_) => 24,
            Op::ClockJump(_) => 25,
            Op::Fault(_) => 26,
        }
    }
}

/// The state of an engine object that decides whether a parked operation is enabled.
#[derive(Debug)]
pub(crate) enum ObjState {
    Mutex {
        owner: Option<usize>,
    },
    RwLock {
        readers: usize,
        writer: Option<usize>,
    },
    Channel {
        len: usize,
        cap: usize,
    },
    Notify {
        permit: bool,
    },
    Atomic,
    /// A joinable task's end: whether it has finished.
    Task {
        finished: bool,
    },
    /// A task's wake-up: whether it has been woken since it blocked.
    Wake {
        woken: bool,
    },
    /// A node (its crashes are decided in `Execution::decide`).
    Node,
    /// A fault site: whether a fault may strike there now (see `sim::fault`).
    FaultSite {
        armed: bool,
    },
}

impl ObjState {
    /// A digest of the scheduling state (who holds a lock, how full a channel is, a permit),
    /// each task number `t` it holds taken as `task(t)` (a symmetry's renaming).
    pub(crate) fn digest(&self, task: impl Fn(usize) -> usize) -> u64 {
        let some = |t: Option<usize>| t.map_or(0, |t| task(t) as u64 + 1);
        match *self {
            ObjState::Mutex { owner } => mix(1, some(owner)),
            ObjState::RwLock { readers, writer } => mix(mix(2, readers as u64), some(writer)),
            ObjState::Channel { len, cap } => mix(mix(3, len as u64), cap as u64),
            ObjState::Notify { permit } => mix(4, u64::from(permit)),
            ObjState::Atomic => 5,
            ObjState::Task { finished } => mix(6, u64::from(finished)),
            ObjState::Wake { woken } => mix(7, u64::from(woken)),
            ObjState::Node => 8,
            ObjState::FaultSite { armed } => mix(9, u64::from(armed)),
        }
    }
}

pub(crate) struct Object {
    /// For traces and deadlock reports; most names are literals, so no run allocates them.
    pub name: crate::Name,
    pub state: ObjState,
}

impl Object {
    pub(crate) fn allows(&self, op: Op) -> bool {
        match (op, &self.state) {
            (Op::Lock(_), ObjState::Mutex { owner }) => owner.is_none(),
            (Op::ReadLock(_), ObjState::RwLock { writer, .. }) => writer.is_none(),
            (Op::WriteLock(_), ObjState::RwLock { readers, writer }) => {
                *readers == 0 && writer.is_none()
            }
            (Op::Send(_), ObjState::Channel { len, cap }) => len < cap,
            (Op::Recv { .. }, ObjState::Channel { len, .. }) => *len > 0,
            (Op::Notified { .. }, ObjState::Notify { permit }) => *permit,
            (Op::Join(_), ObjState::Task { finished }) => *finished,
            (Op::Blocked(_), ObjState::Wake { woken }) => *woken,
            (Op::Crash(_) | Op::ClockJump(_) | Op::Fault(_), _) => false,
            _ => true,
        }
    }
}

/// Renders an operation with its object's name, for traces and deadlock reports.
pub(crate) struct Describe<'a> {
    pub op: Op,
    pub objects: &'a [Object],
}

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |o: ObjId| &*self.objects[o.0].name;
        match self.op {
            Op::Start => write!(f, "start"),
            Op::Yield(label) => write!(f, "await {label}"),
            Op::Choose(n) => write!(f, "choose(0..{n})"),
            Op::Lock(o) => write!(f, "lock {}", name(o)),
            Op::ReadLock(o) => write!(f, "read-lock {}", name(o)),
            Op::WriteLock(o) => write!(f, "write-lock {}", name(o)),
            Op::Send(o) => write!(f, "send {}", name(o)),
            Op::TrySend(o) => write!(f, "try_send {}", name(o)),
            Op::Recv { ch, idle } => {
                write!(f, "recv {}{}", name(ch), if idle { " (idle)" } else { "" })
            }
            Op::TryRecv(o) => write!(f, "try_recv {}", name(o)),
            Op::Notify(o) => write!(f, "notify {}", name(o)),
            Op::Notified { n, idle } => {
                write!(
                    f,
                    "notified {}{}",
                    name(n),
                    if idle { " (idle)" } else { "" }
                )
            }
            Op::Atomic(o, a) => {
                let verb = match a {
                    AtomicOp::Load => "load",
                    AtomicOp::Store => "store",
                    AtomicOp::CompareExchange => "compare_exchange",
                    AtomicOp::FetchAdd => "fetch_add",
                    AtomicOp::FetchSub => "fetch_sub",
                };
                write!(f, "{verb} {}", name(o))
            }
            Op::Join(o) => write!(f, "join {}", name(o)),
            Op::YieldNow => write!(f, "yield_now"),
            Op::Blocked(_) => write!(f, "wake-up"),
            Op::Crash(o) => write!(f, "crash {}", name(o)),
            Op::ClockJump(_) => write!(f, "clock jump"),
            Op::Fault(o) => write!(f, "{}", name(o)),
            Op::Access(o, kind) => {
                let verb = match kind {
                    crate::vocab::AccessKind::Read => "read",
                    crate::vocab::AccessKind::Commuting => "update",
                    crate::vocab::AccessKind::Write => "write",
                };
                write!(f, "{verb} {}", name(o))
            }
        }
    }
}
