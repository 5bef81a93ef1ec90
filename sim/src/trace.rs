//! The trace of a run: one line per step (task, operation, effect) with the model's events in
//! between. Recorded only when asked for (replay, rendering); exploration keeps just a digest.

use std::fmt::Write as _;

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceLine {
    /// The strategy granted `task` the baton to perform `op`.
    Step {
        step: usize,
        task: String,
        op: String,
        /// The engine object the operation touched (lock, channel, notify, atomic).
        #[serde(skip_serializing_if = "Option::is_none")]
        object: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        effect: Option<String>,
        /// Another enabled task was running and was preempted.
        preempted: bool,
    },
    /// The model recorded an event (a frame on a wire, a ghost fact).
    Event {
        step: usize,
        task: String,
        text: String,
    },
    /// How the run ended.
    End { step: usize, text: String },
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    pub lines: Vec<TraceLine>,
}

impl Trace {
    /// Renders the trace as text: one line per step, preemptions marked with `*`.
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
                TraceLine::End { step, text } => {
                    let _ = writeln!(out, "{step:>4}! {text}");
                }
            }
        }
        out
    }
}
