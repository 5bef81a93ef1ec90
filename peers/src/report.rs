//! How measurements become rows of the one table: the cells for runs/s, time to a first
//! violation (median over seeds) and exhaustive searches, braid/peer ratios, and the table.

use std::time::Duration;

use sim::explore::Summary;
use sim::strategy::Reduction;

use crate::{loom_rt, shuttle_rt, Budget};

/// One table row: what, braid's result, the peer and its result, braid/peer.
pub struct Row {
    pub what: String,
    pub braid: String,
    pub peer: String,
    pub peer_result: String,
    pub ratio: String,
}

pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 {
        format!("{s:.0} s")
    } else if s >= 0.1 {
        format!("{s:.2} s")
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

pub fn ratio(braid: f64, peer: f64) -> String {
    if peer > 0.0 && braid.is_finite() && peer.is_finite() {
        format!("{:.2}", braid / peer)
    } else {
        "n/a".to_string()
    }
}

/// The median of per-seed results, a seed that did not find the violation counting as +inf.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        return f64::INFINITY;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// A runs/s row: braid's runs against a shuttle exploration of the same length.
pub fn throughput_row(what: String, b: &Summary, peer: String, s: &shuttle_rt::Outcome) -> Row {
    let b_rate = b.runs_per_sec();
    let s_rate = s.runs as f64 / s.elapsed.as_secs_f64();
    let peer_result = match &s.failure {
        None => format!(
            "{s_rate:.0} runs/s ({} runs in {})",
            s.runs,
            secs(s.elapsed)
        ),
        Some(f) => format!("failed at run {}: {f}", s.runs),
    };
    Row {
        what,
        braid: format!(
            "{b_rate:.0} runs/s ({} runs in {}{})",
            b.runs,
            secs(b.elapsed),
            if b.violations.is_empty() {
                String::new()
            } else {
                format!(", {} violations", b.violations.len())
            }
        ),
        peer,
        peer_result,
        ratio: if s.failure.is_none() {
            ratio(b_rate, s_rate)
        } else {
            "n/a".into()
        },
    }
}

/// Per-seed searches for a first violation: runs and wall time to it, a seed that found
/// nothing (within the cap) counting as +inf.
#[derive(Default)]
pub struct Trials {
    runs: Vec<f64>,
    time: Vec<f64>,
    found: u64,
}

impl Trials {
    pub fn push(&mut self, found: Option<(u64, Duration)>) {
        match found {
            Some((runs, time)) => {
                self.found += 1;
                self.runs.push(runs as f64);
                self.time.push(time.as_secs_f64());
            }
            None => {
                self.runs.push(f64::INFINITY);
                self.time.push(f64::INFINITY);
            }
        }
    }

    fn median_runs(&self) -> f64 {
        median(self.runs.clone())
    }

    fn median_time(&self) -> f64 {
        median(self.time.clone())
    }

    fn runs_cell(&self, budget: &Budget) -> String {
        let m = self.median_runs();
        if m.is_finite() {
            format!("{m:.0} runs (found {}/{})", self.found, budget.seeds)
        } else {
            format!(
                "> {} runs (found {}/{})",
                budget.find_cap, self.found, budget.seeds
            )
        }
    }

    fn time_cell(&self) -> String {
        let m = self.median_time();
        if m.is_finite() {
            secs(Duration::from_secs_f64(m))
        } else {
            "not found (median)".to_string()
        }
    }
}

/// The two rows of one first-violation comparison: median runs, then median time.
/// `what` completes "runs to 1st violation, ..." and "time to 1st violation, ...".
pub fn first_violation_rows(
    budget: &Budget,
    what: &str,
    b: &Trials,
    peer: &str,
    s: &Trials,
) -> [Row; 2] {
    [
        Row {
            what: format!("runs to 1st violation, {what}"),
            braid: b.runs_cell(budget),
            peer: peer.to_string(),
            peer_result: s.runs_cell(budget),
            ratio: ratio(b.median_runs(), s.median_runs()),
        },
        Row {
            what: format!("time to 1st violation, {what}"),
            braid: b.time_cell(),
            peer: peer.to_string(),
            peer_result: s.time_cell(),
            ratio: ratio(b.median_time(), s.median_time()),
        },
    ]
}

/// braid's DFS reductions, each measured in its own row.
pub const REDUCTIONS: [Reduction; 3] = [
    Reduction::VisitedStates,
    Reduction::PartialOrder,
    Reduction::None,
];

/// How a DFS row names its reduction.
pub fn dfs_label(reduction: Reduction) -> &'static str {
    match reduction {
        Reduction::VisitedStates => "DFS + visited states",
        Reduction::PartialOrder => "DFS + POR (DPOR / bounded POR)",
        Reduction::None => "DFS, no reduction",
    }
}

/// braid's cell for a DFS search given up after `cap`.
pub fn dfs_cell(b: &Summary, reduction: Reduction, cap: Duration) -> String {
    let pruned = if reduction != Reduction::None {
        format!(" (+{} pruned)", b.pruned)
    } else {
        String::new()
    };
    if let Some(v) = b.violations.first() {
        format!(
            "VIOLATION {}: first at run {}, {} of {} runs{}",
            v.invariant,
            v.first_run + 1,
            v.count,
            b.runs,
            if b.exhaustive { " (exhausted)" } else { "" }
        )
    } else if b.exhaustive {
        format!("exhausted: {} runs{pruned} in {}", b.runs, secs(b.elapsed))
    } else {
        format!(
            "did not finish in {}: {} runs{pruned} reached ({:.0}/s)",
            secs(cap),
            b.runs,
            b.runs_per_sec()
        )
    }
}

/// loom's cell for a check given up after `cap`.
pub fn loom_cell(l: &loom_rt::Outcome, cap: Duration) -> String {
    match (&l.failure, l.finished) {
        (Some(f), _) => format!("failed after {} iterations: {f}", l.iterations),
        (None, true) => format!(
            "exhausted: {} iterations in {}",
            l.iterations,
            secs(l.elapsed)
        ),
        (None, false) => format!(
            "did not finish in {}: {} iterations reached ({:.0}/s)",
            secs(cap),
            l.iterations,
            l.iterations as f64 / l.elapsed.as_secs_f64()
        ),
    }
}

/// braid/loom time, when both exhausted the space without a failure.
pub fn exhaustive_ratio(b: &Summary, l: &loom_rt::Outcome) -> String {
    if b.exhaustive && b.violations.is_empty() && l.finished && l.failure.is_none() {
        format!(
            "{} (time)",
            ratio(b.elapsed.as_secs_f64(), l.elapsed.as_secs_f64())
        )
    } else {
        "n/a".into()
    }
}

pub fn print_table(budget: &Budget, rows: &[Row]) {
    println!(
        "braid vs shuttle 0.9 / loom 0.7 on the broker bind race and the relay same-ID \
         replacement ({} pass)",
        if budget.quick { "quick" } else { "full" }
    );
    println!("command: {}", budget.command());
    println!(
        "one thread each, run one after another; seeds 1..={}; each seed may take {} runs; \
         exhaustive searches capped at {}",
        budget.seeds,
        budget.find_cap,
        secs(budget.exhaustive_cap)
    );
    println!(
        "braid/peer: runs/s above 1 = braid faster; runs and time below 1 = braid needs fewer \
         / less"
    );
    println!();
    let header = Row {
        what: "measurement".into(),
        braid: "braid".into(),
        peer: "peer".into(),
        peer_result: "peer result".into(),
        ratio: "braid/peer".into(),
    };
    let all: Vec<&Row> = std::iter::once(&header).chain(rows.iter()).collect();
    let width = |f: fn(&Row) -> &str| all.iter().map(|r| f(r).chars().count()).max().unwrap_or(0);
    let w = [
        width(|r| &r.what),
        width(|r| &r.braid),
        width(|r| &r.peer),
        width(|r| &r.peer_result),
        width(|r| &r.ratio),
    ];
    let line = |r: &Row| {
        println!(
            "| {:<w0$} | {:<w1$} | {:<w2$} | {:<w3$} | {:>w4$} |",
            r.what,
            r.braid,
            r.peer,
            r.peer_result,
            r.ratio,
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4]
        )
    };
    line(&header);
    println!(
        "|{}|{}|{}|{}|{}:|",
        "-".repeat(w[0] + 2),
        "-".repeat(w[1] + 2),
        "-".repeat(w[2] + 2),
        "-".repeat(w[3] + 2),
        "-".repeat(w[4] + 1)
    );
    for r in rows {
        line(r);
    }
}

pub fn progress(what: &str) {
    eprintln!("[peers] {what}");
}
