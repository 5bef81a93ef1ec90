//! A Mermaid sequence diagram of a run, to paste into a pull request comment.

use std::fmt::Write as _;

use super::{rows, step_label, Caption, Lanes, Row};
use crate::trace::{Trace, TraceLine};

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
    for row in rows(trace) {
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
                let label = text(&format!("{steps}: {label}"));
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
                let _ = writeln!(
                    out,
                    "    Note right of {}: {}",
                    id(lanes.task(task)),
                    text(t)
                );
            }
            TraceLine::End { step, text: t } => {
                let first = id(0);
                let last = id(lanes.count().saturating_sub(1));
                let _ = writeln!(out, "    rect rgb(255, 200, 200)");
                let _ = writeln!(out, "    Note over {first},{last}: {step}: {}", text(t));
                let _ = writeln!(out, "    end");
            }
        }
    }
    out
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
    for line in &trace.lines {
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
            TraceLine::Step { .. } => {}
            TraceLine::Event { task, text: t, .. } => {
                let _ = writeln!(out, "    Note over {}: {}", id(lanes.task(task)), text(t));
            }
            TraceLine::End { step, text: t } => {
                let last = id(lanes.tasks.len().saturating_sub(1));
                let _ = writeln!(out, "    rect rgb(255, 200, 200)");
                let _ = writeln!(out, "    Note over T0,{last}: {step}: {}", text(t));
                let _ = writeln!(out, "    end");
            }
        }
    }
    out
}
