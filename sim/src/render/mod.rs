//! Pictures of a replayed run: a swimlane SVG (and an HTML page around it) and a Mermaid
//! sequence diagram for pull-request comments. Both draw one lane per task and one per engine
//! object the run touched; operations are arrows from a task to the object, model events (frames
//! on a wire) are labelled in the task's lane, preemptions and the violating step are highlighted.

mod mermaid;
mod svg;

pub use mermaid::{mermaid, mermaid_compact};
pub use svg::{html, svg};

use crate::trace::{Trace, TraceLine};

/// What a picture is of.
pub struct Caption<'a> {
    pub title: &'a str,
    /// The violation's invariant and message, if the run violated.
    pub verdict: Option<(&'a str, &'a str)>,
}

/// Lanes in order of first appearance: tasks first, then objects.
pub(crate) struct Lanes {
    pub tasks: Vec<String>,
    pub objects: Vec<String>,
}

impl Lanes {
    pub(crate) fn of(trace: &Trace) -> Lanes {
        let mut lanes = Lanes {
            tasks: Vec::new(),
            objects: Vec::new(),
        };
        for line in &trace.lines {
            let (task, object) = match line {
                TraceLine::Step { task, object, .. } => (Some(task), object.as_ref()),
                TraceLine::Event { task, .. } => (Some(task), None),
                TraceLine::End { .. } => (None, None),
            };
            if let Some(t) = task {
                if !lanes.tasks.contains(t) {
                    lanes.tasks.push(t.clone());
                }
            }
            if let Some(o) = object {
                if !lanes.objects.contains(o) {
                    lanes.objects.push(o.clone());
                }
            }
        }
        lanes
    }

    pub(crate) fn task(&self, name: &str) -> usize {
        self.tasks.iter().position(|t| t == name).unwrap_or(0)
    }

    pub(crate) fn object(&self, name: &str) -> usize {
        self.tasks.len() + self.objects.iter().position(|o| o == name).unwrap_or(0)
    }

    pub(crate) fn count(&self) -> usize {
        self.tasks.len() + self.objects.len()
    }
}

/// The label of a step's arrow: the operation without its object name, plus the effect.
pub(crate) fn step_label(op: &str, object: Option<&str>, effect: Option<&str>) -> String {
    let verb = match object {
        Some(o) => op.replacen(&format!(" {o}"), "", 1),
        None => op.to_string(),
    };
    match effect {
        Some(e) => format!("{verb} -> {e}"),
        None => verb,
    }
}
