//! What the swimlane SVG draws to explain a run beyond its rows: each phase as a shaded span on
//! its task's lane, labelled down its left edge; each message as a dashed purple curve from
//! where it was enqueued to where it hit the wire; the violation's frames outlined in red; and,
//! after a deadlock, one row per stuck task with an arrow to what it waits on and who holds it.

use std::fmt::Write as _;

use super::svg::{esc, text_width, Layout, PAD, ROW, TOP};
use super::{step_label, Annotations};
use crate::trace::{Trace, TraceLine};

/// The rows the wait-for section takes under the trace: a heading and one per waiting task.
pub(super) fn wait_for_rows(trace: &Trace) -> usize {
    match trace.wait_for.len() {
        0 => 0,
        n => n + 1,
    }
}

/// Each phase: a blue span over its rows on its task's lane, its name written downwards.
pub(super) fn phases(out: &mut String, l: &Layout, a: &Annotations) {
    for span in &a.phases {
        let Some((first, last)) = a.span_rows(span) else {
            continue;
        };
        let left = l.x(l.lanes.task(&span.task)) - l.lane / 2 + 3;
        let (top, height) = (TOP + first * ROW, (last - first + 1) * ROW);
        let open = if span.end.is_none() {
            " (the run ended inside it)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r##"<rect class="phase" x="{left}" y="{top}" width="{}" height="{height}" rx="6" fill="#1a73e8" fill-opacity="0.08" stroke="#1a73e8" stroke-opacity="0.5" stroke-dasharray="6 3"><title>phase {}{open}</title></rect>"##,
            l.lane - 6,
            esc(&span.name)
        );
        let (x, y) = (left + 4, top + 6);
        let _ = writeln!(
            out,
            r##"<text class="phase-label" x="{x}" y="{y}" transform="rotate(90 {x} {y})" font-size="10" fill="#1a73e8">{}</text>"##,
            esc(&span.name)
        );
    }
}

/// Each message enqueued and later on the wire: a dashed curve between the two rows, bulging
/// left of the lanes (clear of the labels, which go right).
pub(super) fn links(out: &mut String, l: &Layout, a: &Annotations) {
    let task_of = |line: usize| match &l.trace.lines[line] {
        TraceLine::Mark { task, .. } => l.x(l.lanes.task(task)),
        _ => 0,
    };
    for (i, link) in a.links.iter().enumerate() {
        let (Some(from), Some(to)) = (a.row_of[link.from], a.row_of[link.to]) else {
            continue;
        };
        let (x1, y1, x2, y2) = (task_of(link.from), l.y(from), task_of(link.to), l.y(to));
        // Curves of several links stand apart.
        let bulge = 30 + 12 * (i % 4);
        let step = link
            .enqueued_step
            .map(|s| format!(" at step {s}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            r##"<path class="link" d="M{x1},{y1} C{},{y1} {},{y2} {},{y2}" fill="none" stroke="#8e24aa" stroke-width="1.5" stroke-dasharray="5 3" marker-end="url(#link-arrow)"><title>{}: enqueued{step}, then on the wire</title></path>"##,
            x1.saturating_sub(bulge),
            x2.saturating_sub(bulge),
            x2 - 5,
            esc(&link.key)
        );
    }
}

/// A frame the violation is about: a red outline around its row's box (an event) or step.
pub(super) fn highlight(out: &mut String, l: &Layout, line: &TraceLine, y: usize) {
    let (x, width) = match line {
        TraceLine::Event { task, text, .. } => (
            l.x(l.lanes.task(task)) + PAD - 3,
            text_width(text, 12.0) + 2 * PAD + 6,
        ),
        TraceLine::Step {
            task,
            op,
            object,
            effect,
            ..
        } => {
            let label = step_label(op, object.as_deref(), effect.as_deref());
            let from = l.x(l.lanes.task(task));
            let to = object.as_deref().map_or(from, |o| l.x(l.lanes.object(o)));
            (from - 8, (to - from).max(text_width(&label, 11.0)) + 20)
        }
        _ => return,
    };
    let _ = writeln!(
        out,
        r##"<rect class="about" x="{x}" y="{}" width="{width}" height="{}" rx="5" fill="none" stroke="#d93025" stroke-width="2.5"><title>a frame the violation is about</title></rect>"##,
        y - ROW / 2,
        ROW
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="{}" fill="#d93025" font-size="10" font-weight="bold">violation's frame</text>"##,
        x + width + 6,
        y + 4
    );
}

/// After a deadlock: a heading, then per task a red arrow to the object it waits on, labelled
/// with the object's state and holder, and a dashed one from the object to each holder.
pub(super) fn wait_for(out: &mut String, l: &Layout) {
    let waits = &l.trace.wait_for;
    if waits.is_empty() {
        return;
    }
    let top = TOP + l.rows * ROW;
    let _ = writeln!(
        out,
        r##"<rect class="wait-for" x="4" y="{top}" width="{}" height="{}" fill="#fff5f5" stroke="#c5221f" stroke-dasharray="4 3"/>"##,
        l.width - 8,
        wait_for_rows(l.trace) * ROW
    );
    let _ = writeln!(
        out,
        r##"<text x="8" y="{}" fill="#c5221f" font-weight="bold">wait-for at the deadlock: who waits on what, and who holds it</text>"##,
        top + ROW / 2 + 4
    );
    for (i, wait) in waits.iter().enumerate() {
        let y = l.y(l.rows + 1 + i);
        let from = l.x(l.lanes.task(&wait.task));
        let colour = if wait.idle { "#888" } else { "#c5221f" };
        let _ = writeln!(
            out,
            r##"<circle cx="{from}" cy="{y}" r="4" fill="{colour}"/>"##
        );
        let to = wait.object.as_deref().map(|o| l.x(l.lanes.object(o)));
        if let Some(to) = to {
            let _ = writeln!(
                out,
                r##"<line x1="{from}" y1="{y}" x2="{to}" y2="{y}" stroke="{colour}" stroke-width="1.5" marker-end="url(#wait-arrow)"/>"##
            );
            for holder in &wait.holders {
                let _ = writeln!(
                    out,
                    r##"<line x1="{to}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-dasharray="4 3" marker-end="url(#wait-arrow)"><title>held by {}</title></line>"##,
                    y + 5,
                    l.x(l.lanes.task(holder)),
                    y + 5,
                    esc(holder)
                );
            }
        }
        let left = to.map_or(from, |to| to.min(from));
        let _ = writeln!(
            out,
            r##"<text class="wait" x="{}" y="{}" fill="{colour}" font-size="11">{}</text>"##,
            left + 10,
            y - 4,
            esc(&wait.describe())
        );
    }
}
