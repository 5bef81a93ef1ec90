//! What the pictures draw besides the rows, from the model's marks (see `sim::mark`): each
//! phase as a span of rows on its task's lane, each message's link from the row where it was
//! enqueued to the row where it hit the wire, and the rows of the frames the violation is about.
//! A mark is no row of its own: it belongs to the row above it, the last line before it.

use super::{rows, Row};
use crate::trace::{Mark, Trace, TraceLine};

pub(crate) struct Annotations {
    /// Per line of the trace, the row it is in or, for a mark, the row above it (`None`: a
    /// mark before the first row).
    pub row_of: Vec<Option<usize>>,
    pub rows: usize,
    pub phases: Vec<Span>,
    pub links: Vec<Link>,
    /// The lines (an event, or a step) of the frames the violation is about.
    pub about: Vec<usize>,
}

/// A phase of a task, between its begin and end marks.
pub(crate) struct Span {
    pub task: String,
    pub name: String,
    /// The lines of its begin and end marks (`None`: the run ended inside the phase).
    pub begin: usize,
    pub end: Option<usize>,
    /// It nests with every other span (Mermaid can draw it as a `rect` block).
    pub nests: bool,
}

/// A message from where it was enqueued to where it hit the wire.
pub(crate) struct Link {
    pub key: String,
    /// The lines of the two marks, and of the event that describes the frame on the wire.
    pub from: usize,
    pub to: usize,
    pub wire_event: Option<usize>,
    /// The step during which it was enqueued.
    pub enqueued_step: Option<usize>,
}

impl Annotations {
    pub(crate) fn of(trace: &Trace) -> Annotations {
        let rows = rows(trace);
        let row_of = row_of(trace, &rows);
        let mut phases: Vec<Span> = Vec::new();
        let mut links = Vec::new();
        let mut enqueued: Vec<(&str, usize, Option<usize>)> = Vec::new();
        let mut last_step = None;
        for (i, line) in trace.lines.iter().enumerate() {
            let (task, mark, name) = match line {
                TraceLine::Step { step, .. } => {
                    last_step = Some(*step);
                    continue;
                }
                TraceLine::Mark {
                    task, mark, name, ..
                } => (task, *mark, name),
                _ => continue,
            };
            match mark {
                Mark::PhaseBegins => phases.push(Span {
                    task: task.clone(),
                    name: name.clone(),
                    begin: i,
                    end: None,
                    nests: true,
                }),
                Mark::PhaseEnds => {
                    // The innermost open phase of that name on that task.
                    if let Some(span) = phases
                        .iter_mut()
                        .rev()
                        .find(|s| s.end.is_none() && s.task == *task && s.name == *name)
                    {
                        span.end = Some(i);
                    }
                }
                Mark::Enqueued => enqueued.push((name, i, last_step)),
                Mark::OnWire => {
                    if let Some(&(_, from, step)) = enqueued.iter().rev().find(|e| e.0 == name) {
                        links.push(Link {
                            key: name.clone(),
                            from,
                            to: i,
                            wire_event: event_naming(trace, i, name),
                            enqueued_step: step,
                        });
                    }
                }
            }
        }
        mark_nesting(&mut phases, trace.lines.len());
        let about = trace
            .about
            .iter()
            .filter_map(|key| frame_line(trace, key))
            .collect();
        Annotations {
            row_of,
            rows: rows.len(),
            phases,
            links,
            about,
        }
    }

    /// The rows a span covers, first to last: from the row below its begin mark to the row of
    /// its end mark (to the last row if the run ended inside it). `None` if it covers none.
    pub(crate) fn span_rows(&self, span: &Span) -> Option<(usize, usize)> {
        let first = self.row_of[span.begin].map_or(0, |r| r + 1);
        let last = match span.end {
            Some(end) => self.row_of[end]?,
            None => self.rows.checked_sub(1)?,
        };
        (first <= last).then_some((first, last))
    }

    /// The rows the violation's frames are in.
    pub(crate) fn about_rows(&self) -> Vec<usize> {
        self.about.iter().filter_map(|&l| self.row_of[l]).collect()
    }

    /// The links that end in row `row`.
    pub(crate) fn links_to(&self, row: usize) -> impl Iterator<Item = &Link> {
        self.links
            .iter()
            .filter(move |l| self.row_of[l.to] == Some(row))
    }
}

/// Per line, its row (see `Annotations::row_of`): a row starts at its first line; a folded
/// row's other lines, and the marks after it, belong to it.
fn row_of(trace: &Trace, rows: &[Row<'_>]) -> Vec<Option<usize>> {
    let first = |row: &Row<'_>| match row {
        Row::Line(line) => *line as *const TraceLine,
        Row::Folded { first, .. } => *first as *const TraceLine,
    };
    let mut current: Option<usize> = None;
    trace
        .lines
        .iter()
        .map(|line| {
            let next = current.map_or(0, |r| r + 1);
            if rows
                .get(next)
                .is_some_and(|row| std::ptr::eq(first(row), line))
            {
                current = Some(next);
            }
            current
        })
        .collect()
}

/// Marks the spans that nest with every other (disjoint or one inside the other). A span the
/// run ended inside closes at the end, the later-begun first.
fn mark_nesting(spans: &mut [Span], lines: usize) {
    let n = spans.len();
    let bounds: Vec<(usize, usize)> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| (s.begin, s.end.unwrap_or(lines + n - i)))
        .collect();
    let nest = |(a0, a1): (usize, usize), (b0, b1): (usize, usize)| {
        a1 < b0 || b1 < a0 || (a0 < b0 && b1 < a1) || (b0 < a0 && a1 < b1)
    };
    for (i, span) in spans.iter_mut().enumerate() {
        span.nests = bounds
            .iter()
            .enumerate()
            .all(|(j, &b)| i == j || nest(bounds[i], b));
    }
}

/// The line of the frame `key` the violation is about: the event that names it after its last
/// mark on the wire (the frame as the model describes it), else the line above that mark; with
/// no such mark, the last event that names it.
fn frame_line(trace: &Trace, key: &str) -> Option<usize> {
    let lines = &trace.lines;
    let wire = lines.iter().rposition(
        |l| matches!(l, TraceLine::Mark { mark: Mark::OnWire, name, .. } if name == key),
    );
    match wire {
        Some(mark) => event_naming(trace, mark, key).or_else(|| line_above(trace, mark)),
        None => lines
            .iter()
            .rposition(|l| matches!(l, TraceLine::Event { text, .. } if names(text, key))),
    }
}

/// The last line before `line` that is no mark.
fn line_above(trace: &Trace, line: usize) -> Option<usize> {
    (0..line)
        .rev()
        .find(|&i| !matches!(trace.lines[i], TraceLine::Mark { .. }))
}

/// The first event after the mark on `line` that names `key` (the frame a wire mark is about,
/// as the model describes it).
fn event_naming(trace: &Trace, line: usize, key: &str) -> Option<usize> {
    (line + 1..trace.lines.len())
        .find(|&i| matches!(&trace.lines[i], TraceLine::Event { text, .. } if names(text, key)))
}

/// Whether `text` names `key` as a whole word ("p1#1" is not in "p1#10").
fn names(text: &str, key: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '#');
    text.match_indices(key).any(|(i, _)| {
        !word(text[..i].chars().next_back()) && !word(text[i + key.len()..].chars().next())
    })
}
