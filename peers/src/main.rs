//! braid against shuttle 0.9 and loom 0.7 on the broker's bind race (issue 5: the race against
//! shuttle and loom). `cargo run --release -p peers` prints one table; `-- --quick` is a fast
//! pass; `-- --cap SECS` sets the time cap of the exhaustive rows (default 300 s, 30 s quick).
//!
//! Every measurement is single-threaded (braid with one job), run one after another.

mod braid_side;
mod broker_spec;
mod loom_broker;
mod shuttle_broker;

use std::any::Any;
use std::fmt::Write as _;
use std::time::Duration;

use sim::strategy::StrategyKind;

use broker_spec::{Spec, Variant};
use shuttle_broker::Sched;

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "(a panic without a message)".to_string()
    }
}

/// Violations are expected (they are what is measured): no panic report. Shuttle's random
/// scheduler still prints the failing seed on stderr.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

struct Budget {
    quick: bool,
    /// Runs for the throughput rows.
    runs: u64,
    /// Seeds for the time-to-first-violation rows.
    seeds: u64,
    /// Runs each seed may take to find the violation.
    find_cap: u64,
    /// Wall time each exhaustive search may take.
    exhaustive_cap: Duration,
}

impl Budget {
    fn from_args() -> Budget {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "--quick");
        let mut budget = if quick {
            Budget {
                quick,
                runs: 2_000,
                seeds: 20,
                find_cap: 10_000,
                exhaustive_cap: Duration::from_secs(30),
            }
        } else {
            Budget {
                quick,
                runs: 20_000,
                seeds: 20,
                find_cap: 100_000,
                exhaustive_cap: Duration::from_secs(300),
            }
        };
        if let Some(i) = args.iter().position(|a| a == "--cap") {
            let secs: u64 = args
                .get(i + 1)
                .and_then(|s| s.parse().ok())
                .expect("--cap takes a number of seconds");
            budget.exhaustive_cap = Duration::from_secs(secs);
        }
        for a in &args {
            if a.starts_with("--") && a != "--quick" && a != "--cap" {
                eprintln!("unknown option {a} (options: --quick, --cap SECS)");
                std::process::exit(2);
            }
        }
        budget
    }

    fn command(&self) -> String {
        let mut cmd = "cargo run --release -p peers".to_string();
        let default_cap = if self.quick { 30 } else { 300 };
        if self.quick || self.exhaustive_cap.as_secs() != default_cap {
            cmd.push_str(" --");
        }
        if self.quick {
            cmd.push_str(" --quick");
        }
        if self.exhaustive_cap.as_secs() != default_cap {
            write!(cmd, " --cap {}", self.exhaustive_cap.as_secs()).unwrap();
        }
        cmd
    }
}

/// One table row: what, braid's result, the peer and its result, braid/peer.
struct Row {
    what: String,
    braid: String,
    peer: String,
    peer_result: String,
    ratio: String,
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 {
        format!("{s:.0} s")
    } else if s >= 0.1 {
        format!("{s:.2} s")
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

fn ratio(braid: f64, peer: f64) -> String {
    if peer > 0.0 && braid.is_finite() && peer.is_finite() {
        format!("{:.2}", braid / peer)
    } else {
        "n/a".to_string()
    }
}

fn progress(what: &str) {
    eprintln!("[peers] {what}");
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

fn main() {
    let budget = Budget::from_args();
    quiet_panics();
    let mut rows = Vec::new();
    throughput_rows(&budget, &mut rows);
    // The race as found in review: braid's `broker-bind-race` scenario (await grain), and braid
    // at access grain (shuttle's grain).
    first_violation_rows(
        &budget,
        &mut rows,
        Spec {
            variant: Variant::Original,
            publishers: 1,
        },
        &["await", "access"],
    );
    // The shipped fix at access grain (braid's `broker-unbound-behind-access` finding): a
    // router preempted inside behind() between its count and awaiting_bind loads.
    first_violation_rows(
        &budget,
        &mut rows,
        Spec {
            variant: Variant::UnboundBehind,
            publishers: 2,
        },
        &["access"],
    );
    exhaustive_rows(&budget, &mut rows);
    print_table(&budget, &rows);
}

/// 1. Runs per second, every run counted: the fixed bound-first variant with 2 publishers
///    (no run stops early), braid at access grain (every atomic access a scheduling point, as in
///    shuttle).
fn throughput_rows(budget: &Budget, rows: &mut Vec<Row>) {
    let spec = Spec {
        variant: Variant::BoundFirst,
        publishers: 2,
    };
    let model = braid_side::broker("bound-first", 2, "access");
    for (name, kind, sched) in [
        ("random", StrategyKind::Random, Sched::Random),
        (
            "PCT d3",
            StrategyKind::Pct { depth: 3 },
            Sched::Pct { depth: 3 },
        ),
    ] {
        progress(&format!("throughput, {name}: braid"));
        let b = braid_side::throughput(model.as_ref(), kind, 1, budget.runs);
        progress(&format!("throughput, {name}: shuttle"));
        let s = shuttle_broker::explore(spec, sched, 1, budget.runs as usize);
        let b_rate = b.runs_per_sec();
        let s_rate = s.runs as f64 / s.elapsed.as_secs_f64();
        let s_result = match &s.failure {
            None => format!(
                "{s_rate:.0} runs/s ({} runs in {})",
                s.runs,
                secs(s.elapsed)
            ),
            Some(f) => format!("failed at run {}: {f}", s.runs),
        };
        rows.push(Row {
            what: format!(
                "runs/s, {name}, bound-first 2 pub, {} runs, seed 1",
                budget.runs
            ),
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
            peer: format!("shuttle {name}"),
            peer_result: s_result,
            ratio: if s.failure.is_none() {
                ratio(b_rate, s_rate)
            } else {
                "n/a".into()
            },
        });
    }
}

/// 2. Runs and wall time to the first delivery-order violation of `spec`, median over the
///    seeds: braid at each of `grains`, and shuttle.
fn first_violation_rows(budget: &Budget, rows: &mut Vec<Row>, spec: Spec, grains: &[&str]) {
    let label = format!("{} {} pub", spec.variant.name(), spec.publishers);
    for (name, kind, sched) in [
        ("random", StrategyKind::Random, Sched::Random),
        (
            "PCT d3",
            StrategyKind::Pct { depth: 3 },
            Sched::Pct { depth: 3 },
        ),
    ] {
        progress(&format!(
            "first violation, {label}, {name}: shuttle, {} seeds",
            budget.seeds
        ));
        let mut s_runs = Vec::new();
        let mut s_time = Vec::new();
        let mut s_found = 0;
        let mut s_other = Vec::new();
        for seed in 1..=budget.seeds {
            let o = shuttle_broker::explore(spec, sched, seed, budget.find_cap as usize);
            match &o.failure {
                Some(f) if f.starts_with("delivery-order") => {
                    s_found += 1;
                    s_runs.push(o.runs as f64);
                    s_time.push(o.elapsed.as_secs_f64());
                }
                Some(f) => {
                    s_other.push(format!("seed {seed}: {f}"));
                    s_runs.push(f64::INFINITY);
                    s_time.push(f64::INFINITY);
                }
                None => {
                    s_runs.push(f64::INFINITY);
                    s_time.push(f64::INFINITY);
                }
            }
        }
        for f in &s_other {
            eprintln!("[peers] shuttle {name}: unexpected failure {f}");
        }
        let s_med_runs = median(s_runs);
        let s_med_time = median(s_time);
        for &grain in grains {
            progress(&format!(
                "first violation, {label}, {name}: braid {grain} grain, {} seeds",
                budget.seeds
            ));
            let model = braid_side::broker(spec.variant.name(), spec.publishers, grain);
            let mut b_runs = Vec::new();
            let mut b_time = Vec::new();
            let mut b_found = 0;
            for seed in 1..=budget.seeds {
                match braid_side::first_violation(model.as_ref(), kind, seed, budget.find_cap) {
                    Some((runs, time)) => {
                        b_found += 1;
                        b_runs.push(runs as f64);
                        b_time.push(time.as_secs_f64());
                    }
                    None => {
                        b_runs.push(f64::INFINITY);
                        b_time.push(f64::INFINITY);
                    }
                }
            }
            let b_med_runs = median(b_runs);
            let b_med_time = median(b_time);
            let scenario = match (spec.variant, grain) {
                (Variant::Original, "await") => "broker-bind-race (await grain)".to_string(),
                _ => format!("{grain} grain"),
            };
            let fmt_runs = |m: f64, found: u64| {
                if m.is_finite() {
                    format!("{m:.0} runs (found {found}/{})", budget.seeds)
                } else {
                    format!(
                        "> {} runs (found {found}/{})",
                        budget.find_cap, budget.seeds
                    )
                }
            };
            let fmt_time = |m: f64| {
                if m.is_finite() {
                    secs(Duration::from_secs_f64(m))
                } else {
                    "not found (median)".to_string()
                }
            };
            rows.push(Row {
                what: format!("runs to 1st violation, {label}, {name}, median; braid {scenario}"),
                braid: fmt_runs(b_med_runs, b_found),
                peer: format!("shuttle {name}"),
                peer_result: fmt_runs(s_med_runs, s_found),
                ratio: ratio(b_med_runs, s_med_runs),
            });
            rows.push(Row {
                what: format!("time to 1st violation, {label}, {name}, median; braid {scenario}"),
                braid: fmt_time(b_med_time),
                peer: format!("shuttle {name}"),
                peer_result: fmt_time(s_med_time),
                ratio: ratio(b_med_time, s_med_time),
            });
        }
    }
}

/// 3. Exhaustive proof of bound-first (access grain) with 1 and 2 publishers: braid's DFS with
///    and without partial-order reduction, and loom.
fn exhaustive_rows(budget: &Budget, rows: &mut Vec<Row>) {
    let cap = budget.exhaustive_cap;
    for publishers in [1, 2] {
        let spec = Spec {
            variant: Variant::BoundFirst,
            publishers,
        };
        progress(&format!(
            "exhaustive, {publishers} publisher(s): loom (cap {})",
            secs(cap)
        ));
        let l = loom_broker::check(spec, cap);
        let l_result = match (&l.failure, l.finished) {
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
        };
        let model = braid_side::broker("bound-first", publishers, "access");
        for reduction in [true, false] {
            let how = if reduction {
                "DFS + DPOR"
            } else {
                "DFS, no reduction"
            };
            progress(&format!(
                "exhaustive, {publishers} publisher(s): braid {how} (cap {})",
                secs(cap)
            ));
            let b = braid_side::exhaustive(model.as_ref(), reduction, cap);
            let pruned = if reduction {
                format!(" (+{} pruned)", b.pruned)
            } else {
                String::new()
            };
            let b_result = if !b.violations.is_empty() {
                format!(
                    "VIOLATION {} after {} runs",
                    b.violations[0].invariant, b.runs
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
            };
            rows.push(Row {
                what: format!(
                    "exhaustive bound-first, {publishers} pub, access grain; braid {how}"
                ),
                braid: b_result,
                peer: "loom".into(),
                peer_result: l_result.clone(),
                ratio: if b.exhaustive && l.finished && l.failure.is_none() {
                    format!(
                        "{} (time)",
                        ratio(b.elapsed.as_secs_f64(), l.elapsed.as_secs_f64())
                    )
                } else {
                    "n/a".into()
                },
            });
        }
    }
}

fn print_table(budget: &Budget, rows: &[Row]) {
    println!(
        "braid vs shuttle 0.9 / loom 0.7 on the broker bind race ({} pass)",
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
