//! braid against turmoil on two server bugs (issue 29, item 8): a key-value store that
//! acknowledges a SET before its log write is durable (found with a crash), and a client that
//! resends an increment when its reply does not come (found with a network fault). The same
//! program source runs under both tools (`programs.rs`); `cargo run --release -p net-peers`
//! measures, for each tool and program over seeds 1..=20, the runs until the first failure,
//! the wall time to it and the runs per CPU-second, and prints one markdown table.
//!
//! Options: `--json PATH` also writes the table's data, per seed, as JSON to PATH (no file is
//! written otherwise); `--seeds N` (default 20); `--cap N` runs per seed (default 10,000, both
//! tools); `--hang-cap N` runs per seed for turmoil's plain counter alone, the slow row (its
//! lost messages hang runs until the simulation's duration; default: the cap); `--quick` is 3
//! seeds, cap 1,000, hang cap 200.
//!
//! Every measurement is single-threaded (braid with one job), run one after another.

mod braid_side;
mod measure;
mod turmoil_side;

use std::fmt::Write as _;
use std::time::Duration;

use measure::SeedResult;

/// The key-value client's assertion message: the bug of program 1.
pub const KV_LOST: &str = "an acknowledged SET was lost";
/// The counter client's assertion message: the bug of program 2.
pub const DOUBLE_APPLY: &str = "the increment was applied twice";
/// The deadline of the counter client's variant with a timeout (more than a round trip at
/// turmoil's highest latency, 2 x 100 ms: only a lost message makes it expire there).
pub const DEADLINE_MS: u64 = 500;

/// One of the programs.
#[derive(Clone, Copy, Debug)]
pub enum Program {
    /// The key-value store that acks before sync, and its client.
    Kv,
    /// The counter and its resending client, with a deadline on replies (ms) or without.
    Counter { deadline: Option<u64> },
}

impl Program {
    pub fn name(self) -> &'static str {
        match self {
            Program::Kv => "ack-before-sync",
            Program::Counter { deadline: None } => "retry-after-reset",
            Program::Counter { deadline: Some(_) } => "retry-after-timeout",
        }
    }

    pub fn bug(self) -> &'static str {
        match self {
            Program::Kv => KV_LOST,
            Program::Counter { .. } => DOUBLE_APPLY,
        }
    }

    fn title(self) -> String {
        match self {
            Program::Kv => "1. ack-before-sync store".to_string(),
            Program::Counter { deadline: None } => {
                "2. retry double apply (client resends on error/close)".to_string()
            }
            Program::Counter { deadline: Some(ms) } => {
                format!("2'. retry double apply, client with a {ms} ms reply timeout")
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Braid,
    Turmoil,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Braid => "braid",
            Tool::Turmoil => "turmoil 0.7.2",
        }
    }
}

/// How `tool` injects the faults `program` needs.
fn faults(tool: Tool, program: Program) -> String {
    use turmoil_side::*;
    match (tool, program) {
        (Tool::Braid, Program::Kv) => {
            "`.crashes(1)`: the strategy crashes `kv` at any scheduling point and decides each \
             unsynced write's fate (lost, kept, torn)"
                .to_string()
        }
        (Tool::Braid, Program::Counter { .. }) => {
            "`.network_faults(1)`: the strategy resets a connection or partitions two hosts at \
             any scheduling point"
                .to_string()
        }
        (Tool::Turmoil, Program::Kv) => format!(
            "the harness: `sim.crash(\"kv\")` at a step drawn uniformly from 1..={CRASH_WINDOW} \
             ({TICK_MS} ms each), `sim.bounce(\"kv\")` 0..={MAX_DOWNTIME} steps later; the crash \
             discards unsynced writes; latency 0..{MAX_LATENCY_MS} ms"
        ),
        (Tool::Turmoil, Program::Counter { .. }) => format!(
            "turmoil's own: `fail_rate({FAIL_RATE})`, `repair_rate({REPAIR_RATE})` (random \
             partitions dropping messages), latency 0..{MAX_LATENCY_MS} ms"
        ),
    }
}

struct Args {
    json: Option<String>,
    seeds: u64,
    cap: u64,
    hang_cap: Option<u64>,
    raw: Vec<String>,
}

fn args() -> Args {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args {
        json: None,
        seeds: 20,
        cap: 10_000,
        hang_cap: None,
        raw: raw.clone(),
    };
    let mut it = raw.into_iter();
    let number = |flag: &str, v: Option<String>| -> u64 {
        v.and_then(|v| v.replace('_', "").parse().ok())
            .filter(|&n: &u64| n > 0)
            .unwrap_or_else(|| usage(&format!("{flag} takes a positive number")))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => args.json = Some(it.next().unwrap_or_else(|| usage("--json takes a path"))),
            "--seeds" => args.seeds = number("--seeds", it.next()),
            "--cap" => args.cap = number("--cap", it.next()),
            "--hang-cap" => args.hang_cap = Some(number("--hang-cap", it.next())),
            "--quick" => {
                args.seeds = 3;
                args.cap = 1_000;
                args.hang_cap = Some(200);
            }
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    args
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("net-peers: {problem}");
    }
    eprintln!(
        "usage: cargo run --release -p net-peers -- [--json PATH] [--seeds N] [--cap N] \
         [--hang-cap N] [--quick]"
    );
    std::process::exit(if problem.is_empty() { 0 } else { 2 });
}

/// One row of the table: a tool on a program, over the seeds.
struct Row {
    tool: Tool,
    program: Program,
    cap: u64,
    seeds: Vec<SeedResult>,
    wall: Duration,
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

fn count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

impl Row {
    fn found(&self) -> usize {
        self.seeds.iter().filter(|s| s.found).count()
    }

    /// Per seed, `f` of a seed that found the bug, +inf for one that did not.
    fn per_seed(&self, f: impl Fn(&SeedResult) -> f64) -> Vec<f64> {
        self.seeds
            .iter()
            .map(|s| if s.found { f(s) } else { f64::INFINITY })
            .collect()
    }

    fn runs_cell(&self) -> String {
        let med = measure::median(self.per_seed(|s| s.runs as f64));
        let max = self
            .per_seed(|s| s.runs as f64)
            .into_iter()
            .fold(0.0, f64::max);
        let show = |x: f64| {
            if x.is_finite() {
                count(x)
            } else {
                format!("> {}", self.cap)
            }
        };
        format!("{} / {}", show(med), show(max))
    }

    fn wall_cell(&self) -> String {
        let med = measure::median(self.per_seed(|s| s.wall.as_secs_f64()));
        let max = self
            .per_seed(|s| s.wall.as_secs_f64())
            .into_iter()
            .fold(0.0, f64::max);
        let show = |x: f64| {
            if x.is_finite() {
                secs(Duration::from_secs_f64(x))
            } else {
                "—".to_string()
            }
        };
        format!("{} / {}", show(med), show(max))
    }

    fn runs_per_cpu_sec(&self) -> f64 {
        let runs: u64 = self.seeds.iter().map(|s| s.runs).sum();
        let cpu: f64 = self.seeds.iter().map(|s| s.cpu.as_secs_f64()).sum();
        runs as f64 / cpu
    }

    fn other_cell(&self) -> String {
        let runs: u64 = self.seeds.iter().map(|s| s.runs).sum();
        let mut parts = Vec::new();
        let hung: u64 = self.seeds.iter().map(|s| s.hung).sum();
        if hung > 0 {
            parts.push(format!(
                "{hung} of {runs} runs hung (a lost message, no reply ever: ended by the {} s \
                 simulation limit)",
                turmoil_side::SIM_DURATION_MS / 1000
            ));
        }
        let others: Vec<&SeedResult> = self.seeds.iter().filter(|s| s.other.is_some()).collect();
        if let Some(first) = others.first() {
            let (n, what) = first.other.clone().unwrap_or_default();
            let total: u64 = others
                .iter()
                .filter_map(|s| s.other.as_ref())
                .map(|o| o.0)
                .sum();
            let what: String = what
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(160)
                .collect();
            parts.push(format!(
                "{total} other failures on {} seeds (seed {}: {n}x {what})",
                others.len(),
                first.seed
            ));
        }
        if parts.is_empty() {
            "—".to_string()
        } else {
            parts.join("; ")
        }
    }
}

fn measure_row(tool: Tool, program: Program, cap: u64, seeds: u64) -> Row {
    eprint!(
        "net-peers: {} on {} (cap {cap}): ",
        tool.name(),
        program.name()
    );
    let t0 = measure::wall_now();
    let mut results = Vec::new();
    for seed in 1..=seeds {
        let r = measure::seed(tool, program, seed, cap);
        eprint!("{}", if r.found { "x" } else { "." });
        results.push(r);
    }
    let wall = measure::wall_now() - t0;
    eprintln!(" {}", secs(wall));
    Row {
        tool,
        program,
        cap,
        seeds: results,
        wall,
    }
}

fn table(rows: &[Row], args: &Args, seeds: u64) -> String {
    let mut out = String::new();
    let command = std::iter::once("cargo run --release -p net-peers".to_string())
        .chain((!args.raw.is_empty()).then(|| format!("-- {}", args.raw.join(" "))))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(out, "Command: `{command}`\n");
    let _ = writeln!(
        out,
        "Seeds 1..={seeds}; each seed runs until the first failure or the cap. Runs, median / max \
         over the seeds (a seed that did not find it counts as more than the cap); wall time is \
         to the end of the first failing run (braid's shrinking of it afterwards not included); \
         runs / CPU-s is every run of the row over its CPU time (getrusage, user + system).\n"
    );
    let _ = writeln!(
        out,
        "| program | tool | faults, and who injects them | cap (runs/seed) | seeds that found it | \
         runs to 1st failure (median / max) | wall to 1st failure (median / max) | runs / CPU-s \
         | row wall | other run outcomes |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---|");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {}/{} | {} | {} | {:.0} | {} | {} |",
            r.program.title(),
            r.tool.name(),
            faults(r.tool, r.program),
            r.cap,
            r.found(),
            r.seeds.len(),
            r.runs_cell(),
            r.wall_cell(),
            r.runs_per_cpu_sec(),
            secs(r.wall),
            r.other_cell(),
        );
    }
    let _ = writeln!(out);
    for r in rows.iter().filter(|r| r.tool == Tool::Braid) {
        // braid's own account: which part of its default plan ran the failing schedule.
        let mut by: Vec<(String, usize)> = Vec::new();
        for s in r.seeds.iter().filter(|s| s.found) {
            let part = s.found_by.as_deref().unwrap_or("?");
            let part = part.split(',').next().unwrap_or(part).to_string();
            match by.iter_mut().find(|(p, _)| *p == part) {
                Some((_, n)) => *n += 1,
                None => by.push((part, 1)),
            }
        }
        let by: Vec<String> = by.iter().map(|(p, n)| format!("{p} {n}")).collect();
        let explored = measure::median(r.per_seed(|s| s.explored_runs.unwrap_or(0) as f64));
        let unseen = r.seeds.iter().filter(|s| s.unseen_before.is_some()).count();
        let _ = writeln!(
            out,
            "- braid on {}: found by {} (seeds; the default plan alternates a bounded DFS and \
             its portfolio), at its exploration's run {} (median; the table's runs add the 17 \
             runs before it: 1 probe, 16 calibration runs); on {unseen} of {} seeds a probe or \
             calibration run had already failed the assertion, unchecked",
            r.program.name(),
            if by.is_empty() {
                "none".to_string()
            } else {
                by.join(", ")
            },
            if explored.is_finite() {
                count(explored)
            } else {
                "—".to_string()
            },
            r.seeds.len(),
        );
    }
    out
}

fn json(rows: &[Row], args: &Args) -> serde_json::Value {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    serde_json::json!({
        "command": std::iter::once("cargo run --release -p net-peers".to_string())
            .chain(args.raw.iter().cloned()).collect::<Vec<_>>().join(" "),
        "turmoil": {
            "version": "0.7.2",
            "tick_ms": turmoil_side::TICK_MS,
            "max_message_latency_ms": turmoil_side::MAX_LATENCY_MS,
            "fail_rate": turmoil_side::FAIL_RATE,
            "repair_rate": turmoil_side::REPAIR_RATE,
            "simulation_duration_ms": turmoil_side::SIM_DURATION_MS,
            "crash_window_steps": turmoil_side::CRASH_WINDOW,
            "max_downtime_steps": turmoil_side::MAX_DOWNTIME,
        },
        "deadline_ms": DEADLINE_MS,
        "rows": rows.iter().map(|r| serde_json::json!({
            "program": r.program.name(),
            "tool": r.tool.name(),
            "faults": faults(r.tool, r.program),
            "cap": r.cap,
            "found": r.found(),
            "runs_per_cpu_sec": r.runs_per_cpu_sec(),
            "row_wall_ms": ms(r.wall),
            "seeds": r.seeds.iter().map(|s| serde_json::json!({
                "seed": s.seed,
                "found": s.found,
                "runs": s.runs,
                "wall_ms": ms(s.wall),
                "cpu_ms": ms(s.cpu),
                "total_wall_ms": ms(s.total_wall),
                "hung_runs": s.hung,
                "other": s.other.as_ref().map(|(n, w)| serde_json::json!({"runs": n, "first": w})),
                "braid_found_by": s.found_by,
                "braid_explored_runs": s.explored_runs,
                "braid_unchecked_failure_at": s.unseen_before,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn main() {
    let args = args();
    measure::install_panic_hook();
    let timeout = Program::Counter {
        deadline: Some(DEADLINE_MS),
    };
    let plain = Program::Counter { deadline: None };
    let plan = [
        (Tool::Braid, Program::Kv, args.cap),
        (Tool::Turmoil, Program::Kv, args.cap),
        (Tool::Braid, plain, args.cap),
        (Tool::Turmoil, plain, args.hang_cap.unwrap_or(args.cap)),
        (Tool::Braid, timeout, args.cap),
        (Tool::Turmoil, timeout, args.cap),
    ];
    let rows: Vec<Row> = plan
        .iter()
        .map(|&(tool, program, cap)| measure_row(tool, program, cap, args.seeds))
        .collect();
    print!("{}", table(&rows, &args, args.seeds));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&json(&rows, &args)).expect("JSON");
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("net-peers: could not write {path}: {e}");
            std::process::exit(1);
        }
        eprintln!("net-peers: wrote {path}");
    }
}
