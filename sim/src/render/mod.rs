//! Pictures of a replayed run: a swimlane SVG (and an HTML page around it) and a Mermaid
//! sequence diagram for pull-request comments. Both draw one lane per task and one per engine
//! object the run touched; operations are arrows from a task to the object, model events (frames
//! on a wire) are labelled in the task's lane, preemptions and the violating step are highlighted.
//! Consecutive identical steps of one task (a poll that finds nothing, again and again) fold
//! into one row: "12-16: try_recv acks -> empty x5".

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

/// A row of a picture: a line of the trace, or a run of identical steps folded into one.
pub(crate) enum Row<'a> {
    Line(&'a TraceLine),
    /// `times` consecutive steps of one task, each the same operation with the same effect and
    /// none preempting (a poll that found nothing, again and again: "try_recv acks -> empty
    /// x5"), from the step of `first` to step `last`.
    Folded {
        first: &'a TraceLine,
        last: usize,
        times: usize,
    },
}

impl Row<'_> {
    /// The step number, or the range of steps folded ("12-16").
    pub(crate) fn steps(&self) -> Option<String> {
        match self {
            Row::Line(TraceLine::Step { step, .. }) => Some(step.to_string()),
            Row::Folded {
                first: TraceLine::Step { step, .. },
                last,
                ..
            } => Some(format!("{step}-{last}")),
            _ => None,
        }
    }
}

/// The trace's lines as rows, each run of two or more identical steps folded into one.
pub(crate) fn rows(trace: &Trace) -> Vec<Row<'_>> {
    fn same(a: &TraceLine, b: &TraceLine) -> bool {
        match (a, b) {
            (
                TraceLine::Step {
                    task,
                    op,
                    object,
                    effect,
                    preempted: false,
                    ..
                },
                TraceLine::Step {
                    task: t,
                    op: o,
                    object: ob,
                    effect: e,
                    preempted: false,
                    ..
                },
            ) => (task, op, object, effect) == (t, o, ob, e),
            _ => false,
        }
    }
    let mut rows: Vec<Row<'_>> = Vec::new();
    for line in &trace.lines {
        let step = match line {
            TraceLine::Step { step, .. } => *step,
            _ => 0,
        };
        let folded = match rows.last_mut() {
            Some(Row::Folded { first, last, times }) if same(first, line) => {
                *last = step;
                *times += 1;
                true
            }
            Some(row) => match row {
                Row::Line(prev) if same(prev, line) => {
                    let first = *prev;
                    *row = Row::Folded {
                        first,
                        last: step,
                        times: 2,
                    };
                    true
                }
                _ => false,
            },
            None => false,
        };
        if !folded {
            rows.push(Row::Line(line));
        }
    }
    rows
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

#[cfg(test)]
mod tests {
    use super::*;

    fn step(step: usize, task: &str, op: &str, effect: Option<&str>) -> TraceLine {
        TraceLine::Step {
            step,
            task: task.into(),
            op: op.into(),
            object: op.split(' ').nth(1).map(str::to_string),
            effect: effect.map(str::to_string),
            preempted: false,
        }
    }

    /// A handler polls its acks five times for nothing, then one that finds an ack.
    fn polls() -> Trace {
        let mut lines = vec![step(0, "handler", "start", None)];
        for s in 1..=5 {
            lines.push(step(s, "handler", "try_recv acks", Some("empty")));
        }
        lines.push(step(6, "handler", "try_recv acks", Some("puback 1")));
        lines.push(step(7, "publisher", "try_recv acks", Some("empty")));
        lines.push(TraceLine::End {
            step: 8,
            text: "violation".into(),
        });
        Trace { lines }
    }

    #[test]
    fn identical_steps_of_one_task_fold_into_one_row() {
        let trace = polls();
        let rows = rows(&trace);
        assert_eq!(
            rows.len(),
            5,
            "start, the five polls, the ack, the other task, the end"
        );
        let steps: Vec<Option<String>> = rows.iter().map(Row::steps).collect();
        assert_eq!(steps[1].as_deref(), Some("1-5"));
        assert!(matches!(rows[1], Row::Folded { times: 5, .. }));
        assert!(
            matches!(rows[2], Row::Line(_)),
            "another effect is not folded"
        );
        assert!(matches!(rows[3], Row::Line(_)), "nor another task's step");
        let caption = Caption {
            title: "polls",
            verdict: None,
        };
        let m = mermaid(&trace, &caption);
        assert!(m.contains("1-5: try_recv -> empty x5"), "{m}");
        assert_eq!(m.matches("try_recv -> empty").count(), 2, "{m}");
        let s = svg(&trace, &caption);
        assert!(s.contains("try_recv -&gt; empty x5"), "{s}");
        assert!(s.contains(">1-5</text>"), "{s}");
    }

    #[test]
    fn a_preempting_step_is_never_folded() {
        let mut trace = polls();
        if let TraceLine::Step { preempted, .. } = &mut trace.lines[3] {
            *preempted = true;
        }
        let rows = rows(&trace);
        assert!(matches!(rows[1], Row::Folded { times: 2, .. }));
        assert!(matches!(rows[2], Row::Line(_)));
        assert!(matches!(rows[3], Row::Folded { times: 2, .. }));
    }
}
