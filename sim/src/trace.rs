//! The trace of a run: one line per step (task, operation, effect) with the model's events and
//! marks in between, and, at the end, what the violation is about or who waits for whom in a
//! deadlock. Recorded only when asked for (replay, rendering); exploration keeps just a digest.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// One line of a trace: a step, a model event, a mark, or the end of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceLine {
    /// The strategy granted `task` the baton to perform `op`.
    Step {
        /// The step's number in the run (from 0).
        step: usize,
        /// The task's name.
        task: String,
        /// The operation (`lock`, `send`, `try_recv`, ...).
        op: String,
        /// The engine object the operation touched (lock, channel, notify, atomic).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        object: Option<String>,
        /// What the operation did, when it did something worth saying ("acquired", "Full", "popped
        /// p1#1").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effect: Option<String>,
        /// Another enabled task was running and was preempted.
        preempted: bool,
    },
    /// The model recorded an event (a frame on a wire, a ghost fact).
    Event {
        /// The step during which the event happened.
        step: usize,
        /// The task that recorded it.
        task: String,
        /// The event, as its `Display` writes it.
        text: String,
    },
    /// A mark the model left for the pictures (see `sim::mark`): no step, in no digest.
    Mark {
        /// The step during which the task left it.
        step: usize,
        /// The task that left it.
        task: String,
        /// What it marks.
        mark: Mark,
        /// The phase's name, or the message's key.
        name: String,
    },
    /// How the run ended.
    End {
        /// The step the run ended at.
        step: usize,
        /// How it ended: holds, the violation, a deadlock, the step limit.
        text: String,
    },
}

/// What a mark says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// The task enters a phase (a span on its lane)...
    PhaseBegins,
    /// ...and leaves it.
    PhaseEnds,
    /// A message entered a queue or a lane...
    Enqueued,
    /// ...and went out on the wire.
    OnWire,
}

/// At a deadlock, one task that cannot move: what it waits for, and why it cannot have it yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    /// The waiting task's name.
    pub task: String,
    /// The operation it is parked on ("lock c2.lifecycle").
    pub op: String,
    /// The object it waits on, if the operation has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The object's state that keeps it waiting ("held by conn:c2", "full: 1 of 1").
    pub state: String,
    /// The tasks that hold the object (a lock's owner, the task joined): the wait-for edges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<String>,
    /// An idle wait (a server with nothing to do), not part of the deadlock proper (its `op`
    /// says "(idle)").
    pub idle: bool,
}

impl Wait {
    /// "lock c2.lifecycle: held by conn:c2".
    pub fn what(&self) -> String {
        match self.state.as_str() {
            "" => self.op.clone(),
            state => format!("{}: {state}", self.op),
        }
    }

    /// "subscriber waits on lock c2.lifecycle: held by conn:c2".
    pub fn describe(&self) -> String {
        format!("{} waits on {}", self.task, self.what())
    }
}

/// How a trace written as JSON beside a test's outcome file is named: `<test>.trace.json`
/// beside `<test>.json` (the library writes it, `braid replay` reads it).
pub const FILE_SUFFIX: &str = ".trace.json";

/// A run's trace, as `braid replay` prints it and the pictures draw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The lines, in the order they happened.
    pub lines: Vec<TraceLine>,
    /// The keys of the frames the violation is about (see `Invariant::about`), for the
    /// pictures to highlight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub about: Vec<String>,
    /// At a deadlock: every unfinished task, what it waits on and who holds that.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_for: Vec<Wait>,
    /// Per task that ran on a node (a host), the node's name, and per daemon task (a
    /// delivery, a fault site) `NETWORK_LANES`: the pictures group their lanes.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub hosts: std::collections::BTreeMap<String, String>,
}

/// The group of the daemon tasks' lanes (deliveries, fault sites) in `Trace::hosts`.
pub const NETWORK_LANES: &str = "(network and faults)";

impl Trace {
    /// Renders the trace as text: one line per step, preemptions marked with `*`. Marks are for
    /// the pictures and the wait-for for `render_wait_for`: neither is here.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            match line {
                TraceLine::Step {
                    step,
                    task,
                    op,
                    effect,
                    preempted,
                    ..
                } => {
                    let mark = if *preempted { '*' } else { ' ' };
                    let _ = write!(out, "{step:>4}{mark} {task:<14} {op}");
                    if let Some(effect) = effect {
                        let _ = write!(out, " -> {effect}");
                    }
                    out.push('\n');
                }
                TraceLine::Event { task, text, .. } => {
                    let _ = writeln!(out, "      {task:<14}   | {text}");
                }
                TraceLine::Mark { .. } => {}
                TraceLine::End { step, text } => {
                    let _ = writeln!(out, "{step:>4}! {text}");
                }
            }
        }
        out
    }

    /// At a deadlock, who waits for what and who holds it, one task a line; empty otherwise.
    pub fn render_wait_for(&self) -> String {
        let mut out = String::new();
        for wait in &self.wait_for {
            let _ = writeln!(out, "  {}", wait.describe());
        }
        out
    }
}
