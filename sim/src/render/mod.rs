//! Pictures of a replayed run: a swimlane SVG (and an HTML page around it) and a Mermaid
//! sequence diagram for pull-request comments. Both draw one lane per task and one per engine
//! object the run touched; operations are arrows from a task to the object, model events (frames
//! on a wire) are labelled in the task's lane, preemptions and the violating step are highlighted.
//! Consecutive identical steps of one task (a poll that finds nothing, again and again) fold
//! into one row: "12-16: try_recv acks -> empty x5". The model's marks explain the run: its
//! phases as spans on a task's lane, each message linked from where it was enqueued to where it
//! hit the wire, the violation's frames highlighted; a deadlock adds who waits for whom.

mod annotations;
mod mermaid;
mod svg;
mod svg_annotations;

pub use mermaid::{mermaid, mermaid_compact};
pub use svg::{html, svg};

pub(crate) use annotations::{Annotations, Link, Span};

use crate::trace::{Trace, TraceLine};

/// What a picture is of.
pub struct Caption<'a> {
    /// The picture's title (the scenario, run, strategy).
    pub title: &'a str,
    /// The violation's invariant and message, if the run violated.
    pub verdict: Option<(&'a str, &'a str)>,
}

/// Lanes in order of first appearance: tasks first, then objects (a deadlock's too).
pub(crate) struct Lanes {
    pub tasks: Vec<String>,
    pub objects: Vec<String>,
    /// The hosts (nodes) the task lanes are grouped by: a name and its lanes' range.
    pub hosts: Vec<(String, std::ops::Range<usize>)>,
}

impl Lanes {
    pub(crate) fn of(trace: &Trace) -> Lanes {
        let mut lanes = Lanes {
            tasks: Vec::new(),
            objects: Vec::new(),
            hosts: Vec::new(),
        };
        for line in &trace.lines {
            let (task, object) = match line {
                TraceLine::Step { task, object, .. } => (Some(task), object.as_ref()),
                TraceLine::Event { task, .. } | TraceLine::Mark { task, .. } => (Some(task), None),
                TraceLine::End { .. } => (None, None),
            };
            lanes.add(task, object);
        }
        for wait in &trace.wait_for {
            lanes.add(Some(&wait.task), wait.object.as_ref());
            for holder in &wait.holders {
                lanes.add(Some(holder), None);
            }
        }
        lanes.group_by_host(trace);
        lanes
    }

    /// Puts each host's task lanes side by side, hosts in the order they first appear, after
    /// the lanes of tasks on no host (the test body's).
    fn group_by_host(&mut self, trace: &Trace) {
        if trace.hosts.is_empty() {
            return;
        }
        let host = |t: &str| trace.hosts.get(t).cloned();
        let mut order: Vec<Option<String>> = vec![None];
        for t in &self.tasks {
            let h = host(t);
            if !order.contains(&h) {
                order.push(h);
            }
        }
        self.tasks
            .sort_by_key(|t| order.iter().position(|h| *h == host(t)));
        for h in order.into_iter().flatten() {
            let first = self.tasks.iter().position(|t| host(t).as_ref() == Some(&h));
            let count = self
                .tasks
                .iter()
                .filter(|t| host(t).as_ref() == Some(&h))
                .count();
            if let Some(first) = first {
                self.hosts.push((h, first..first + count));
            }
        }
    }

    fn add(&mut self, task: Option<&String>, object: Option<&String>) {
        if let Some(t) = task {
            if !self.tasks.contains(t) {
                self.tasks.push(t.clone());
            }
        }
        if let Some(o) = object {
            if !self.objects.contains(o) {
                self.objects.push(o.clone());
            }
        }
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
#[derive(Clone, Copy)]
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

/// The trace's lines as rows, each run of two or more identical steps folded into one. Marks
/// are no rows (see `Annotations`), but no fold reaches across one.
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
    let mut after_mark = false;
    for line in &trace.lines {
        let step = match line {
            TraceLine::Step { step, .. } => *step,
            TraceLine::Mark { .. } => {
                after_mark = true;
                continue;
            }
            _ => 0,
        };
        let folded = match rows.last_mut() {
            _ if std::mem::take(&mut after_mark) => false,
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
        Trace {
            lines,
            ..Trace::default()
        }
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

    fn mark(task: &str, mark: crate::trace::Mark, name: &str) -> TraceLine {
        TraceLine::Mark {
            step: 0,
            task: task.into(),
            mark,
            name: name.into(),
        }
    }

    /// Mermaid's `rect` blocks close exactly as often as they open.
    fn balanced(m: &str) -> bool {
        let opens = m
            .lines()
            .filter(|l| l.trim_start().starts_with("rect "))
            .count();
        opens == m.lines().filter(|l| l.trim() == "end").count()
    }

    #[test]
    fn a_mark_is_no_row_and_no_fold_reaches_across_it() {
        use crate::trace::Mark;
        let mut trace = polls();
        // The handler's phase spans polls 2 to 4; a message enqueued by the handler at poll 1
        // hits the wire at the ack.
        trace.lines.insert(2, mark("handler", Mark::Enqueued, "m1"));
        trace
            .lines
            .insert(3, mark("handler", Mark::PhaseBegins, "poll"));
        trace
            .lines
            .insert(7, mark("handler", Mark::PhaseEnds, "poll"));
        trace.lines.insert(10, mark("handler", Mark::OnWire, "m1"));
        trace.about = vec!["m1".into()];
        let rows = rows(&trace);
        let steps: Vec<Option<String>> = rows.iter().map(Row::steps).collect();
        assert_eq!(
            steps[..4],
            [
                Some("0".into()),
                Some("1".into()),
                Some("2-4".into()),
                Some("5".into())
            ],
            "the marks split the five polls: {steps:?}"
        );
        let a = Annotations::of(&trace);
        assert_eq!(a.span_rows(&a.phases[0]), Some((2, 2)));
        assert_eq!(a.links.len(), 1);
        assert_eq!(a.links[0].enqueued_step, Some(1));
        assert_eq!(a.about_rows(), [4], "the step above the wire mark: the ack");
        let caption = Caption {
            title: "marks",
            verdict: None,
        };
        let m = mermaid(&trace, &caption);
        assert!(
            m.contains("phase poll begins") && m.contains("phase poll ends"),
            "{m}"
        );
        assert!(m.contains("(m1 enqueued at step 1)"), "{m}");
        assert!(m.contains("rect rgb(255, 205, 210)"), "{m}");
        assert!(balanced(&m), "{m}");
        assert!(balanced(&mermaid_compact(&trace, &caption)));
        let s = svg(&trace, &caption);
        for class in ["phase", "phase-label", "link", "about"] {
            assert!(s.contains(&format!("class=\"{class}\"")), "{class}: {s}");
        }
    }

    #[test]
    fn phases_that_overlap_without_nesting_are_notes_not_rects() {
        use crate::trace::Mark;
        let mut trace = polls();
        trace
            .lines
            .insert(1, mark("handler", Mark::PhaseBegins, "a"));
        trace
            .lines
            .insert(3, mark("publisher", Mark::PhaseBegins, "b"));
        trace.lines.insert(5, mark("handler", Mark::PhaseEnds, "a"));
        // b never ends: the run ended inside it.
        let a = Annotations::of(&trace);
        assert!(a.phases.iter().all(|p| !p.nests));
        let m = mermaid(
            &trace,
            &Caption {
                title: "overlap",
                verdict: None,
            },
        );
        assert!(!m.contains("rect rgb(232, 240, 254)"), "{m}");
        assert!(m.contains("phase a ends") && m.contains("phase b begins"));
        assert!(balanced(&m), "{m}");
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
