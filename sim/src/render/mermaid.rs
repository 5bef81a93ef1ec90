//! A Mermaid sequence diagram of a run, to paste into a pull request comment. A task's phase is
//! a blue `rect` (or, where phases overlap without nesting, a pair of notes), a message on the
//! wire says at which step it was enqueued, the violation's frames sit in red `rect`s, and a
//! deadlock ends with who waits on what.

use std::fmt::Write as _;

use super::{rows, step_label, Annotations, Caption, Lanes, Row, Span};
use crate::trace::{Trace, TraceLine};

const PHASE: &str = "rect rgb(232, 240, 254)";
const ABOUT: &str = "rect rgb(255, 205, 210)";

/// Mermaid treats `#` and `;` specially in message text: write them as entity codes.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            c => out.push(c),
        }
    }
    out
}

/// What drawing a run needs at hand: its lanes and the model's marks, each lane's participant
/// id made of `prefix` and its index.
struct Diagram<'t> {
    trace: &'t Trace,
    lanes: Lanes,
    a: Annotations,
    prefix: char,
}

impl<'t> Diagram<'t> {
    fn of(trace: &'t Trace, prefix: char) -> Diagram<'t> {
        Diagram {
            trace,
            lanes: Lanes::of(trace),
            a: Annotations::of(trace),
            prefix,
        }
    }

    fn id(&self, lane: usize) -> String {
        format!("{}{lane}", self.prefix)
    }

    fn task_id(&self, task: &str) -> String {
        self.id(self.lanes.task(task))
    }

    /// The title and a participant per task.
    fn header(&self, caption: &Caption<'_>) -> String {
        let mut out = String::from("sequenceDiagram\n");
        let _ = writeln!(out, "    title {}", text(caption.title));
        for (i, t) in self.lanes.tasks.iter().enumerate() {
            let host = self.lanes.hosts.iter().find(|(_, r)| r.contains(&i));
            if let Some((name, _)) = host.filter(|(_, r)| r.start == i) {
                let _ = writeln!(out, "    box {}", text(&super::svg::host_label(name)));
            }
            let _ = writeln!(out, "    participant {} as {}", self.id(i), text(t));
            if host.is_some_and(|(_, r)| r.end == i + 1) {
                out.push_str("    end\n");
            }
        }
        out
    }

    fn phases_at(&self, out: &mut String, line: usize) {
        phases_at(out, &self.a, line, &|t| self.task_id(t));
    }
}

/// A Mermaid sequence diagram of the run: one participant per task and per engine object it
/// touched.
pub fn mermaid(trace: &Trace, caption: &Caption<'_>) -> String {
    let d = Diagram::of(trace, 'L');
    let mut out = d.header(caption);
    for (i, o) in d.lanes.objects.iter().enumerate() {
        let _ = writeln!(
            out,
            "    participant {} as {}",
            d.id(d.lanes.tasks.len() + i),
            text(o)
        );
    }
    let about = d.a.about_rows();
    d.phase_marks(&mut out, None);
    for (i, row) in rows(trace).into_iter().enumerate() {
        let about = about.contains(&i);
        if about {
            let _ = writeln!(out, "    {ABOUT}");
        }
        d.row(&mut out, i, row, about);
        if about {
            let _ = writeln!(out, "    end");
        }
        d.phase_marks(&mut out, Some(i));
    }
    close_open_phases(&mut out, &d.a);
    d.waits(&mut out);
    out
}

/// The full diagram: a lane per task and per object, every row drawn.
impl Diagram<'_> {
    /// The phase marks on the lines of `row` (`None`: on the lines before the first row).
    fn phase_marks(&self, out: &mut String, row: Option<usize>) {
        let lines = (0..self.trace.lines.len()).filter(|&l| self.a.row_of[l] == row);
        for line in lines {
            self.phases_at(out, line);
        }
    }

    /// Row `i`, `about` when it is one of the violation's frames.
    fn row(&self, out: &mut String, i: usize, row: Row<'_>, about: bool) {
        let steps = row.steps().unwrap_or_default();
        let (line, times) = match row {
            Row::Line(line) => (line, 1),
            Row::Folded { first, times, .. } => (first, times),
        };
        match line {
            TraceLine::Step {
                task,
                op,
                object,
                effect,
                preempted,
                ..
            } => {
                let mut label = step_label(op, object.as_deref(), effect.as_deref());
                if times > 1 {
                    label = format!("{label} x{times}");
                }
                for link in self.a.links_to(i) {
                    label.push_str(&enqueued_at(link, &label));
                }
                let label = text(&format!("{steps}: {label}{}", frame_tag(about)));
                self.step(out, task, object.as_deref(), *preempted, &label);
            }
            TraceLine::Event { task, text: t, .. } => self.event(out, i, task, t, about),
            TraceLine::Mark { .. } => {}
            TraceLine::End { step, text: t } => self.end(out, *step, t),
        }
    }

    /// A step: an arrow to its object (a note, if it has none), boxed when it preempts.
    fn step(
        &self,
        out: &mut String,
        task: &str,
        object: Option<&str>,
        preempted: bool,
        label: &str,
    ) {
        let from = self.task_id(task);
        if preempted {
            let _ = writeln!(out, "    rect rgb(255, 228, 181)");
            let _ = writeln!(out, "    Note over {from}: preempts the running task");
        }
        match object {
            Some(o) => {
                let _ = writeln!(
                    out,
                    "    {from}->>{}: {label}",
                    self.id(self.lanes.object(o))
                );
            }
            None => {
                let _ = writeln!(out, "    Note over {from}: {label}");
            }
        }
        if preempted {
            let _ = writeln!(out, "    end");
        }
    }

    /// A model event, in a note right of its task, with where its message was enqueued.
    fn event(&self, out: &mut String, i: usize, task: &str, t: &str, about: bool) {
        let mut note = t.to_string();
        for link in self.a.links_to(i) {
            note.push_str(&enqueued_at(link, t));
        }
        let _ = writeln!(
            out,
            "    Note right of {}: {}{}",
            self.task_id(task),
            text(&note),
            frame_tag(about)
        );
    }

    /// The end of the run, in red across every lane.
    fn end(&self, out: &mut String, step: usize, t: &str) {
        let first = self.id(0);
        let last = self.id(self.lanes.count().saturating_sub(1));
        let _ = writeln!(out, "    rect rgb(255, 200, 200)");
        let _ = writeln!(out, "    Note over {first},{last}: {step}: {}", text(t));
        let _ = writeln!(out, "    end");
    }

    /// A deadlock's waits: a crossed arrow to the object, and from it to whoever holds it.
    fn waits(&self, out: &mut String) {
        for wait in &self.trace.wait_for {
            let from = self.task_id(&wait.task);
            match &wait.object {
                Some(o) => {
                    let object = self.id(self.lanes.object(o));
                    let _ = writeln!(out, "    {from}--x{object}: waits: {}", text(&wait.what()));
                    for holder in &wait.holders {
                        let holder = self.task_id(holder);
                        let _ = writeln!(out, "    {object}-->>{holder}: held by");
                    }
                }
                None => {
                    let _ = writeln!(out, "    Note over {from}: waits: {}", text(&wait.what()));
                }
            }
        }
    }
}

/// The phase marks on `line`: a nesting phase opens or closes its `rect`, with a note.
fn phases_at(out: &mut String, a: &Annotations, line: usize, task_id: &dyn Fn(&str) -> String) {
    for span in &a.phases {
        if span.begin == line {
            if span.nests {
                let _ = writeln!(out, "    {PHASE}");
            }
            let _ = writeln!(
                out,
                "    Note over {}: phase {} begins",
                task_id(&span.task),
                text(&span.name)
            );
        }
        if span.end == Some(line) {
            let _ = writeln!(
                out,
                "    Note over {}: phase {} ends",
                task_id(&span.task),
                text(&span.name)
            );
            if span.nests {
                let _ = writeln!(out, "    end");
            }
        }
    }
}

/// The `rect`s of the phases the run ended inside, innermost first.
fn close_open_phases(out: &mut String, a: &Annotations) {
    let open = |s: &&Span| s.nests && s.end.is_none();
    for _ in a.phases.iter().filter(open) {
        let _ = writeln!(out, "    end");
    }
}

/// " (enqueued at step 4)" after the wire's event (naming the message when the event does not).
fn enqueued_at(link: &super::Link, event: &str) -> String {
    let step = link
        .enqueued_step
        .map_or(String::new(), |s| format!(" at step {s}"));
    match event.contains(link.key.as_str()) {
        true => format!(" (enqueued{step})"),
        false => format!(" ({} enqueued{step})", link.key),
    }
}

fn frame_tag(about: bool) -> &'static str {
    if about {
        " [violation's frame]"
    } else {
        ""
    }
}

/// The compact form, for a pull request or a CI summary at a comment's width: tasks only (no
/// lane per lock, channel or atomic), the model's events in their task's lane, the preempting
/// steps and the end of the run.
pub fn mermaid_compact(trace: &Trace, caption: &Caption<'_>) -> String {
    let d = Diagram::of(trace, 'T');
    let mut out = d.header(caption);
    for (j, line) in trace.lines.iter().enumerate() {
        let about = d.a.about.contains(&j);
        if about {
            let _ = writeln!(out, "    {ABOUT}");
        }
        d.compact_line(&mut out, j, line, about);
        if about {
            let _ = writeln!(out, "    end");
        }
    }
    close_open_phases(&mut out, &d.a);
    d.compact_waits(&mut out);
    out
}

/// The compact diagram: a lane per task, only what explains the run drawn.
impl Diagram<'_> {
    /// Line `j`, `about` when it is one of the violation's frames.
    fn compact_line(&self, out: &mut String, j: usize, line: &TraceLine, about: bool) {
        match line {
            TraceLine::Step {
                step,
                task,
                op,
                effect,
                preempted,
                ..
            } => {
                // A step is drawn only when it preempts: a frame's step needs its note.
                // No object lanes here: the operation keeps its object's name.
                let label = text(&step_label(op, None, effect.as_deref()));
                let task = self.task_id(task);
                if *preempted {
                    let _ = writeln!(out, "    rect rgb(255, 228, 181)");
                    let _ = writeln!(out, "    Note over {task}: {step}* preempts: {label}");
                    let _ = writeln!(out, "    end");
                } else if about {
                    let _ = writeln!(
                        out,
                        "    Note over {task}: {step}: {label}{}",
                        frame_tag(true)
                    );
                }
            }
            TraceLine::Event { task, text: t, .. } => {
                let mut note = t.clone();
                for link in self.a.links.iter().filter(|l| l.wire_event == Some(j)) {
                    note.push_str(&enqueued_at(link, t));
                }
                let _ = writeln!(
                    out,
                    "    Note over {}: {}{}",
                    self.task_id(task),
                    text(&note),
                    frame_tag(about)
                );
            }
            TraceLine::Mark { .. } => self.phases_at(out, j),
            TraceLine::End { step, text: t } => {
                let last = self.id(self.lanes.tasks.len().saturating_sub(1));
                let _ = writeln!(out, "    rect rgb(255, 200, 200)");
                let _ = writeln!(out, "    Note over T0,{last}: {step}: {}", text(t));
                let _ = writeln!(out, "    end");
            }
        }
    }

    /// No object lanes: a wait points at the task that holds what it waits on, if any.
    fn compact_waits(&self, out: &mut String) {
        for wait in &self.trace.wait_for {
            let from = self.task_id(&wait.task);
            match wait.holders.first() {
                Some(holder) => {
                    let _ = writeln!(
                        out,
                        "    {from}--x{}: waits: {}",
                        self.task_id(holder),
                        text(&wait.what())
                    );
                }
                None => {
                    let _ = writeln!(out, "    Note over {from}: waits: {}", text(&wait.what()));
                }
            }
        }
    }
}
