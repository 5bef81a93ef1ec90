//! Client actions, frames and the events the relay model records: frames queued and put on the
//! wire, plus ghost facts the real relay cannot see (which request lineage a frame belongs to,
//! when a client action took effect).

use std::fmt;

use crate::pubsub::PubSubEvent;

/// A client-chosen subscription id.
pub type SubId = &'static str;
/// A channel; its pubsub topic has the same name.
pub type Channel = &'static str;

/// A client frame on one sub id, numbered in arrival order (0: before the run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Action {
    pub seq: u32,
    pub kind: ActionKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionKind {
    Req,
    Close,
}

impl Action {
    pub fn req(seq: u32) -> Action {
        Action {
            seq,
            kind: ActionKind::Req,
        }
    }

    pub fn close(seq: u32) -> Action {
        Action {
            seq,
            kind: ActionKind::Close,
        }
    }

    pub fn is_req(self) -> bool {
        self.kind == ActionKind::Req
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ActionKind::Req => write!(f, "r{}", self.seq),
            ActionKind::Close => write!(f, "close{}", self.seq),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A stored (historical) or live event, by label.
    Event(&'static str),
    Eose,
    Notice(&'static str),
    Closed(&'static str),
}

/// A relay-to-client frame for a sub id, with the lineage it belongs to (ghost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub sub: SubId,
    pub kind: FrameKind,
    pub from: Action,
}

impl Frame {
    pub fn is_rejection(&self) -> bool {
        matches!(self.kind, FrameKind::Notice(_) | FrameKind::Closed(_))
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self.kind, FrameKind::Closed(_))
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sub = self.sub;
        match self.kind {
            FrameKind::Event(label) => write!(f, "EVENT {sub} {label}")?,
            FrameKind::Eose => write!(f, "EOSE {sub}")?,
            FrameKind::Notice(msg) => write!(f, "NOTICE {sub} \"{msg}\"")?,
            FrameKind::Closed(msg) => write!(f, "CLOSED {sub} \"{msg}\"")?,
        }
        write!(f, " [{}]", self.from)
    }
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelayEvent {
    /// The read loop took a client frame (admission, for a REQ in the later variants).
    Arrived {
        sub: SubId,
        action: Action,
    },
    /// Ghost: `action` took effect on `sub` (a REQ committed or was refused and retired the
    /// lineage; a CLOSE cancelled and removed it).
    TookEffect {
        sub: SubId,
        action: Action,
        how: &'static str,
    },
    /// A frame entered the outbound queue (its place on the wire is fixed from here on).
    Queued(Frame),
    /// The outbound queue was full: the frame was not queued.
    Overflow(Frame),
    /// The writer put a frame on the wire.
    Wire(Frame),
    /// Ghost: a request's handler is live work for the relay / no longer is.
    Work {
        sub: SubId,
        req: Action,
        live: bool,
    },
    Registered {
        sub: SubId,
        req: Action,
        channel: Channel,
    },
    Unregistered {
        sub: SubId,
        req: Action,
        channel: Channel,
    },
    /// The connection is gone (every subscription drained).
    Disconnected,
    PubSub(PubSubEvent),
}

impl fmt::Display for RelayEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelayEvent::Arrived { sub, action } => match action.kind {
                ActionKind::Req => write!(f, "read: REQ {sub} ({action})"),
                ActionKind::Close => write!(f, "read: CLOSE {sub} ({action})"),
            },
            RelayEvent::TookEffect { sub, action, how } => {
                write!(f, "ghost: {action} took effect on {sub} ({how})")
            }
            RelayEvent::Queued(frame) => write!(f, "queued {frame}"),
            RelayEvent::Overflow(frame) => write!(f, "outbound full, dropped {frame}"),
            RelayEvent::Wire(frame) => write!(f, "wire: {frame}"),
            RelayEvent::Work { sub, req, live } => {
                if *live {
                    write!(f, "ghost: {req} on {sub} is pending work")
                } else {
                    write!(f, "ghost: {req} on {sub} no longer pending")
                }
            }
            RelayEvent::Registered { sub, req, channel } => {
                write!(f, "registry: {sub} -> {req} on {channel}")
            }
            RelayEvent::Unregistered { sub, req, channel } => {
                write!(f, "registry: {sub} ({req} on {channel}) removed")
            }
            RelayEvent::Disconnected => write!(f, "connection drained and removed"),
            RelayEvent::PubSub(e) => write!(f, "pubsub: {e}"),
        }
    }
}
