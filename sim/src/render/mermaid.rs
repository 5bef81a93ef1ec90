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

pub fn mermaid(trace: &Trace, caption: &Caption<'_>) -> String {
    let lanes = Lanes::of(trace);
    let id = |lane: usize| format!("L{lane}");
    let mut out = String::from("sequenceDiagram\n");
    let _ = writeln!(out, "    title {}", text(caption.title));
    for (i, t) in lanes.tasks.iter().enumerate() {
        let _ = writeln!(out, "    participant {} as {}", id(i), text(t));
    }
    for (i, o) in lanes.objects.iter().enumerate() {
        let _ = writeln!(
            out,
            "    participant {} as {}",
            id(lanes.tasks.len() + i),
            text(o)
        );
    }
    let a = Annotations::of(trace);
    let about = a.about_rows();
    let task_id = |t: &str| id(lanes.task(t));
    let phase_marks = |out: &mut String, row: Option<usize>| {
        let lines = (0..trace.lines.len()).filter(|&l| a.row_of[l] == row);
        for line in lines {
            phases_at(out, &a, line, &task_id);
        }
    };
    phase_marks(&mut out, None);
    for (i, row) in rows(trace).into_iter().enumerate() {
        if about.contains(&i) {
            let _ = writeln!(out, "    {ABOUT}");
        }
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
                let from = id(lanes.task(task));
                let mut label = step_label(op, object.as_deref(), effect.as_deref());
                if times > 1 {
                    label = format!("{label} x{times}");
                }
                for link in a.links_to(i) {
                    label.push_str(&enqueued_at(link, &label));
                }
                let label = text(&format!(
                    "{steps}: {label}{}",
                    frame_tag(about.contains(&i))
                ));
                if *preempted {
                    let _ = writeln!(out, "    rect rgb(255, 228, 181)");
                    let _ = writeln!(out, "    Note over {from}: preempts the running task");
                }
                match object {
                    Some(o) => {
                        let _ = writeln!(out, "    {from}->>{}: {label}", id(lanes.object(o)));
                    }
                    None => {
                        let _ = writeln!(out, "    Note over {from}: {label}");
                    }
                }
                if *preempted {
                    let _ = writeln!(out, "    end");
                }
            }
            TraceLine::Event { task, text: t, .. } => {
                let mut note = t.clone();
                for link in a.links_to(i) {
                    note.push_str(&enqueued_at(link, t));
                }
                let _ = writeln!(
                    out,
                    "    Note right of {}: {}{}",
                    id(lanes.task(task)),
                    text(&note),
                    frame_tag(about.contains(&i))
                );
            }
            TraceLine::Mark { .. } => {}
            TraceLine::End { step, text: t } => {
                let first = id(0);
                let last = id(lanes.count().saturating_sub(1));
                let _ = writeln!(out, "    rect rgb(255, 200, 200)");
                let _ = writeln!(out, "    Note over {first},{last}: {step}: {}", text(t));
                let _ = writeln!(out, "    end");
            }
        }
        if about.contains(&i) {
            let _ = writeln!(out, "    end");
        }
        phase_marks(&mut out, Some(i));
    }
    close_open_phases(&mut out, &a);
    for wait in &trace.wait_for {
        let from = id(lanes.task(&wait.task));
        match &wait.object {
            Some(o) => {
                let object = id(lanes.object(o));
                let _ = writeln!(out, "    {from}--x{object}: waits: {}", text(&wait.what()));
                for holder in &wait.holders {
                    let holder = id(lanes.task(holder));
                    let _ = writeln!(out, "    {object}-->>{holder}: held by");
                }
            }
            None => {
                let _ = writeln!(out, "    Note over {from}: waits: {}", text(&wait.what()));
            }
        }
    }
    out
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
    let lanes = Lanes::of(trace);
    let id = |lane: usize| format!("T{lane}");
    let mut out = String::from("sequenceDiagram\n");
    let _ = writeln!(out, "    title {}", text(caption.title));
    for (i, t) in lanes.tasks.iter().enumerate() {
        let _ = writeln!(out, "    participant {} as {}", id(i), text(t));
    }
    let a = Annotations::of(trace);
    let task_id = |t: &str| id(lanes.task(t));
    for (j, line) in trace.lines.iter().enumerate() {
        let about = a.about.contains(&j);
        if about {
            let _ = writeln!(out, "    {ABOUT}");
        }
        match line {
            TraceLine::Step {
                step,
                task,
                op,
                effect,
                preempted: true,
                ..
            } => {
                // No object lanes here: the operation keeps its object's name.
                let label = step_label(op, None, effect.as_deref());
                let _ = writeln!(out, "    rect rgb(255, 228, 181)");
                let _ = writeln!(
                    out,
                    "    Note over {}: {step}* preempts: {}",
                    id(lanes.task(task)),
                    text(&label)
                );
                let _ = writeln!(out, "    end");
            }
            TraceLine::Step {
                step,
                task,
                op,
                effect,
                ..
            } => {
                if about {
                    // A step is drawn only when it preempts: a frame's step needs its note.
                    let label = step_label(op, None, effect.as_deref());
                    let _ = writeln!(
                        out,
                        "    Note over {}: {step}: {}{}",
                        task_id(task),
                        text(&label),
                        frame_tag(true)
                    );
                }
            }
            TraceLine::Event { task, text: t, .. } => {
                let mut note = t.clone();
                for link in a.links.iter().filter(|l| l.wire_event == Some(j)) {
                    note.push_str(&enqueued_at(link, t));
                }
                let _ = writeln!(
                    out,
                    "    Note over {}: {}{}",
                    id(lanes.task(task)),
                    text(&note),
                    frame_tag(about)
                );
            }
            TraceLine::Mark { .. } => phases_at(&mut out, &a, j, &task_id),
            TraceLine::End { step, text: t } => {
                let last = id(lanes.tasks.len().saturating_sub(1));
                let _ = writeln!(out, "    rect rgb(255, 200, 200)");
                let _ = writeln!(out, "    Note over T0,{last}: {step}: {}", text(t));
                let _ = writeln!(out, "    end");
            }
        }
        if about {
            let _ = writeln!(out, "    end");
        }
    }
    close_open_phases(&mut out, &a);
    // No object lanes: a wait points at the task that holds what it waits on, if any.
    for wait in &trace.wait_for {
        let from = task_id(&wait.task);
        match wait.holders.first() {
            Some(holder) => {
                let _ = writeln!(
                    out,
                    "    {from}--x{}: waits: {}",
                    task_id(holder),
                    text(&wait.what())
                );
            }
            None => {
                let _ = writeln!(out, "    Note over {from}: waits: {}", text(&wait.what()));
            }
        }
    }
    out
}
