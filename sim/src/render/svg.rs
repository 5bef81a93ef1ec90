//! A swimlane SVG of a run: one column per task, then one per engine object; each step an
//! arrow from the task to the object it touched; model events as labels in the task's lane;
//! preempted steps shaded orange, the violation red.

use std::fmt::Write as _;

use super::{step_label, Caption, Lanes};
use crate::trace::{Trace, TraceLine};

const LANE: usize = 180;
const ROW: usize = 22;
const LEFT: usize = 56;
const TOP: usize = 74;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn x(lane: usize) -> usize {
    LEFT + lane * LANE + LANE / 2
}

pub fn svg(trace: &Trace, caption: &Caption<'_>) -> String {
    let lanes = Lanes::of(trace);
    let width = LEFT + lanes.count() * LANE + 40;
    let height = TOP + trace.lines.len() * ROW + 30;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12">"#
    );
    out.push_str(concat!(
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">"#,
        r##"<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>"##,
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
    // Lane headers and lines.
    for lane in 0..lanes.count() {
        let (name, is_task) = if lane < lanes.tasks.len() {
            (&lanes.tasks[lane], true)
        } else {
            (&lanes.objects[lane - lanes.tasks.len()], false)
        };
        let left = LEFT + lane * LANE + 6;
        let fill = if is_task { "#e8f0fe" } else { "#f1f3f4" };
        let _ = writeln!(
            out,
            r##"<rect x="{left}" y="{}" width="{}" height="22" rx="4" fill="{fill}" stroke="#999"/>"##,
            TOP - 28,
            LANE - 12
        );
        let weight = if is_task { "bold" } else { "normal" };
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-weight="{weight}">{}</text>"#,
            x(lane),
            TOP - 13,
            esc(name)
        );
        let dash = if is_task {
            ""
        } else {
            r#" stroke-dasharray="4 4""#
        };
        let _ = writeln!(
            out,
            r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#bbb"{dash}/>"##,
            x(lane),
            TOP - 6,
            height - 20
        );
    }
    for (row, line) in trace.lines.iter().enumerate() {
        let y = TOP + row * ROW + ROW / 2;
        match line {
            TraceLine::Step {
                step,
                task,
                op,
                object,
                effect,
                preempted,
            } => {
                if *preempted {
                    let _ = writeln!(
                        out,
                        r##"<rect x="4" y="{}" width="{}" height="{ROW}" fill="#ffe4b5"/>"##,
                        y - ROW / 2,
                        width - 8
                    );
                    let _ = writeln!(
                        out,
                        r##"<text x="{}" y="{}" fill="#b35900" font-size="10">preempts</text>"##,
                        x(lanes.task(task)) + 8,
                        y - 2
                    );
                }
                let _ = writeln!(
                    out,
                    r##"<text x="8" y="{}" fill="#666">{step}</text>"##,
                    y + 4
                );
                let from = x(lanes.task(task));
                let _ = writeln!(
                    out,
                    r##"<circle cx="{from}" cy="{y}" r="4" fill="#1a73e8"/>"##
                );
                let label = esc(&step_label(op, object.as_deref(), effect.as_deref()));
                match object {
                    Some(o) => {
                        let to = x(lanes.object(o));
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
            TraceLine::Event { task, text, .. } => {
                let at = x(lanes.task(task));
                let w = 7 * text.chars().count() + 12;
                let _ = writeln!(
                    out,
                    r##"<rect x="{}" y="{}" width="{w}" height="{}" rx="4" fill="#e6f4ea" stroke="#188038"/>"##,
                    at + 6,
                    y - ROW / 2 + 2,
                    ROW - 4
                );
                let _ = writeln!(
                    out,
                    r##"<text x="{}" y="{}" fill="#0d652d" font-weight="bold">{}</text>"##,
                    at + 12,
                    y + 4,
                    esc(text)
                );
            }
            TraceLine::End { step, text } => {
                let _ = writeln!(
                    out,
                    r##"<rect x="4" y="{}" width="{}" height="{ROW}" fill="#fde2e1"/>"##,
                    y - ROW / 2,
                    width - 8
                );
                let _ = writeln!(
                    out,
                    r##"<text x="8" y="{}" fill="#b00020" font-weight="bold">{step}  {}</text>"##,
                    y + 4,
                    esc(text)
                );
            }
        }
    }
    out.push_str("</svg>\n");
    out
}

/// A self-contained HTML page: the caption, the swimlane picture, a legend, the text trace.
pub fn html(trace: &Trace, caption: &Caption<'_>) -> String {
    format!(
        concat!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>\n",
            "<style>body{{font-family:system-ui,sans-serif;margin:24px}} pre{{background:#f8f9fa;padding:12px}}",
            " .legend span{{display:inline-block;padding:2px 8px;margin-right:8px;border-radius:4px}}</style>\n",
            "</head><body>\n<h1>{title}</h1>\n<p class=\"legend\">",
            "<span style=\"background:#e8f0fe\">task lane</span>",
            "<span style=\"background:#f1f3f4\">engine object (lock, channel, notify, atomic)</span>",
            "<span style=\"background:#e6f4ea\">model event: a frame on the wire, a ghost fact</span>",
            "<span style=\"background:#ffe4b5\">preemption</span>",
            "<span style=\"background:#fde2e1\">end of run / violation</span></p>\n",
            "{svg}\n<h2>Trace</h2>\n<pre>{text}</pre>\n</body></html>\n"
        ),
        title = esc(caption.title),
        svg = svg(trace, caption),
        text = esc(&trace.render_text()),
    )
}
