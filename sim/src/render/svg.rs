//! A swimlane SVG of a run: one column per task, then one per engine object; each step an
//! arrow from the task to the object it touched; model events as labels in the task's lane;
//! preempted steps shaded orange, the violation red. Text is sized for a monospace font that
//! draws about 0.6 em per character (7.2 px at 12 px): boxes and lanes are as wide as their text.
//! The model's phases, links and the violation's frames are drawn by `svg_annotations`.

use std::fmt::Write as _;

use super::svg_annotations::{highlight, links, phases, wait_for, wait_for_rows};
use super::{rows, step_label, Annotations, Caption, Lanes, Row};
use crate::trace::{Trace, TraceLine};

/// The narrowest lane.
const MIN_LANE: usize = 180;
pub(super) const ROW: usize = 22;
pub(super) const LEFT: usize = 56;
pub(super) const TOP: usize = 74;
/// Padding inside a box, each side.
pub(super) const PAD: usize = 6;

/// The width in pixels of `text` at `size` px in the picture's monospace font.
pub(crate) fn text_width(text: &str, size: f64) -> usize {
    (text.chars().count() as f64 * size * 0.6).ceil() as usize
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Where the picture's columns are: every lane as wide as its widest header.
pub(super) struct Layout<'a> {
    pub lanes: Lanes,
    pub trace: &'a Trace,
    /// A lane's width.
    pub lane: usize,
    pub width: usize,
    pub height: usize,
    pub rows: usize,
}

impl<'a> Layout<'a> {
    fn of(trace: &'a Trace) -> Layout<'a> {
        let lanes = Lanes::of(trace);
        let widest = lanes
            .tasks
            .iter()
            .chain(&lanes.objects)
            .map(|n| text_width(n, 12.0) + 4 * PAD)
            .max()
            .unwrap_or(0);
        let lane = widest.max(MIN_LANE);
        let rows = rows(trace).len();
        Layout {
            width: LEFT + lanes.count() * lane + 40,
            height: TOP + (rows + wait_for_rows(trace)) * ROW + 30,
            lanes,
            trace,
            lane,
            rows,
        }
    }

    /// The centre of lane `i`.
    pub(super) fn x(&self, i: usize) -> usize {
        LEFT + i * self.lane + self.lane / 2
    }

    /// The middle of row `r`.
    pub(super) fn y(&self, r: usize) -> usize {
        TOP + r * ROW + ROW / 2
    }

    fn name(&self, i: usize) -> (&str, bool) {
        match self.lanes.tasks.get(i) {
            Some(t) => (t, true),
            None => (&self.lanes.objects[i - self.lanes.tasks.len()], false),
        }
    }
}

/// A swimlane SVG of the run: one lane per task and per engine object, preemptions and the
/// violating step highlighted.
pub fn svg(trace: &Trace, caption: &Caption<'_>) -> String {
    let layout = Layout::of(trace);
    let annotations = Annotations::of(trace);
    let about = annotations.about_rows();
    let mut out = String::new();
    header(&mut out, &layout, caption);
    hosts(&mut out, &layout);
    lanes(&mut out, &layout);
    // Under the rows: the phases' spans and the messages' links.
    phases(&mut out, &layout, &annotations);
    links(&mut out, &layout, &annotations);
    for (i, row) in rows(layout.trace).into_iter().enumerate() {
        let y = layout.y(i);
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
                let from = layout.x(layout.lanes.task(task));
                if *preempted {
                    preemption(&mut out, &layout, from, y);
                }
                let mut label = step_label(op, object.as_deref(), effect.as_deref());
                if times > 1 {
                    label = format!("{label} x{times}");
                }
                let to = object.as_deref().map(|o| layout.x(layout.lanes.object(o)));
                arrow(&mut out, &steps, from, to, &label, y);
            }
            TraceLine::Event { task, text, .. } => {
                event(&mut out, layout.x(layout.lanes.task(task)), text, y)
            }
            TraceLine::Mark { .. } => {}
            TraceLine::End { step, text } => end(&mut out, &layout, *step, text, y),
        }
        if about.contains(&i) {
            highlight(&mut out, &layout, line, y);
        }
    }
    wait_for(&mut out, &layout);
    out.push_str("</svg>\n");
    out
}

/// The `<svg>` element, the arrow marker, the title and the verdict.
fn header(out: &mut String, l: &Layout, caption: &Caption<'_>) {
    let (width, height) = (l.width, l.height);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">"#
    );
    out.push_str(concat!(
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">"#,
        r##"<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>"##,
        r#"<marker id="link-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">"#,
        r##"<path d="M0,0 L10,5 L0,10 z" fill="#8e24aa"/></marker>"##,
        r#"<marker id="wait-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">"#,
        r##"<path d="M0,0 L10,5 L0,10 z" fill="#c5221f"/></marker></defs>"##,
        "\n"
    ));
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="12" y="22" font-size="15" font-weight="bold">{}</text>"#,
        esc(caption.title)
    );
    if let Some((inv, msg)) = caption.verdict {
        let _ = writeln!(
            out,
            r##"<text x="12" y="40" fill="#b00020">violation {}: {}</text>"##,
            esc(inv),
            esc(msg)
        );
    }
}

/// "host kv", or the network's group as it is named.
pub(super) fn host_label(host: &str) -> String {
    match host == crate::trace::NETWORK_LANES {
        true => host.to_string(),
        false => format!("host {host}"),
    }
}

/// Each host's lanes on a tinted band, its name at the foot (tasks of a node run on that host).
fn hosts(out: &mut String, l: &Layout) {
    for (i, (host, lanes)) in l.lanes.hosts.iter().enumerate() {
        let fill = if i % 2 == 0 { "#fff8e1" } else { "#e8f5e9" };
        let x = LEFT + lanes.start * l.lane;
        let _ = writeln!(
            out,
            r##"<rect x="{x}" y="{}" width="{}" height="{}" fill="{fill}" stroke="#e0c98a"/>"##,
            TOP - 32,
            lanes.len() * l.lane,
            l.height - TOP + 12
        );
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" fill="#8d6e00">{}</text>"##,
            x + PAD,
            l.height - 8,
            esc(&host_label(host))
        );
    }
}

/// Each lane's header box and its line down the picture (dashed for an engine object).
fn lanes(out: &mut String, l: &Layout) {
    for lane in 0..l.lanes.count() {
        let (name, is_task) = l.name(lane);
        let (fill, weight, dash) = if is_task {
            ("#e8f0fe", "bold", "")
        } else {
            ("#f1f3f4", "normal", r#" stroke-dasharray="4 4""#)
        };
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="22" rx="4" fill="{fill}" stroke="#999"/>"##,
            LEFT + lane * l.lane + PAD,
            TOP - 28,
            l.lane - 2 * PAD
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-weight="{weight}">{}</text>"#,
            l.x(lane),
            TOP - 13,
            esc(name)
        );
        let _ = writeln!(
            out,
            r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#bbb"{dash}/>"##,
            l.x(lane),
            TOP - 6,
            l.height - 20
        );
    }
}

/// A preempted step's row shaded, and a tag left of the task's dot (its labels go right).
fn preemption(out: &mut String, l: &Layout, from: usize, y: usize) {
    let _ = writeln!(
        out,
        r##"<rect x="4" y="{}" width="{}" height="{ROW}" fill="#ffe4b5"/>"##,
        y - ROW / 2,
        l.width - 8
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="{}" text-anchor="end" fill="#b35900" font-size="10">preempts</text>"##,
        from - 8,
        y + 4
    );
}

/// A step: its number, the task's dot, and an arrow to the object it touched (or the label
/// beside the dot).
fn arrow(out: &mut String, step: &str, from: usize, to: Option<usize>, label: &str, y: usize) {
    let _ = writeln!(
        out,
        r##"<text x="8" y="{}" fill="#666">{step}</text>"##,
        y + 4
    );
    let _ = writeln!(
        out,
        r##"<circle cx="{from}" cy="{y}" r="4" fill="#1a73e8"/>"##
    );
    let label = esc(label);
    match to {
        Some(to) => {
            let _ = writeln!(
                out,
                r##"<line x1="{from}" y1="{y}" x2="{to}" y2="{y}" stroke="#555" marker-end="url(#arrow)"/>"##
            );
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">{label}</text>"#,
                (from + to) / 2,
                y - 4
            );
        }
        None => {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" font-size="11">{label}</text>"#,
                from + 9,
                y + 4
            );
        }
    }
}

/// A model event: a green box as wide as its text, in the task's lane.
fn event(out: &mut String, at: usize, text: &str, y: usize) {
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" rx="4" fill="#e6f4ea" stroke="#188038"/>"##,
        at + PAD,
        y - ROW / 2 + 2,
        text_width(text, 12.0) + 2 * PAD,
        ROW - 4
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="{}" fill="#0d652d" font-weight="bold">{}</text>"##,
        at + 2 * PAD,
        y + 4,
        esc(text)
    );
}

/// The end of the run: the violation, or how the run ended, across the picture in red.
fn end(out: &mut String, l: &Layout, step: usize, text: &str, y: usize) {
    let _ = writeln!(
        out,
        r##"<rect x="4" y="{}" width="{}" height="{ROW}" fill="#fde2e1"/>"##,
        y - ROW / 2,
        l.width - 8
    );
    let _ = writeln!(
        out,
        r##"<text x="8" y="{}" fill="#b00020" font-weight="bold">{step}  {}</text>"##,
        y + 4,
        esc(text)
    );
}

/// The wait-for of a deadlock under the trace's text, if any.
fn wait_for_text(trace: &Trace) -> String {
    match trace.render_wait_for().as_str() {
        "" => String::new(),
        waits => format!("\nwait-for at the deadlock:\n{waits}"),
    }
}

/// A self-contained HTML page: the caption, the swimlane picture (in a container that scrolls
/// sideways rather than cut off the right-hand lanes), a legend, the text trace.
pub fn html(trace: &Trace, caption: &Caption<'_>) -> String {
    format!(
        concat!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title>\n",
            "<style>body{{font-family:system-ui,sans-serif;margin:24px}} pre{{background:#f8f9fa;padding:12px;overflow-x:auto}}",
            " .picture{{max-width:100%;overflow-x:auto;border:1px solid #ddd}} .picture svg{{display:block;max-width:none}}",
            " .legend span{{display:inline-block;padding:2px 8px;margin-right:8px;border-radius:4px}}</style>\n",
            "</head><body>\n<h1>{title}</h1>\n<p class=\"legend\">",
            "<span style=\"background:#e8f0fe\">task lane</span>",
            "<span style=\"background:#f1f3f4\">engine object (lock, channel, notify, atomic)</span>",
            "<span style=\"background:#e6f4ea\">model event: a frame on the wire, a ghost fact</span>",
            "<span style=\"background:#ffe4b5\">preemption</span>",
            "<span style=\"background:#fde2e1\">end of run / violation</span>",
            "<span style=\"background:#e3ecfb\">a task's phase</span>",
            "<span style=\"color:#8e24aa\">- - &gt; a message from its queue to the wire</span>",
            "<span style=\"outline:2px solid #d93025\">a frame the violation is about</span></p>\n",
            "<div class=\"picture\">\n{svg}</div>\n<h2>Trace</h2>\n<pre>{text}</pre>\n</body></html>\n"
        ),
        title = esc(caption.title),
        svg = svg(trace, caption),
        text = esc(&(trace.render_text() + &wait_for_text(trace))),
    )
}
