//! braid against shuttle 0.9 and loom 0.7 on the broker's bind race (issue 5: the race against
//! shuttle and loom) and on the relay's same-ID replacement. `cargo run --release -p peers`
//! prints one table; `-- --quick` is a fast pass; `-- --cap SECS` sets the time cap of the
//! exhaustive rows (default 300 s, 30 s quick); `-- --only broker|relay` measures one model;
//! `-- --throughput` only the runs/s rows.
//!
//! Every measurement is single-threaded (braid with one job), run one after another.

mod braid_side;
mod broker_rows;
mod broker_spec;
mod loom_broker;
mod loom_relay;
mod loom_rt;
mod relay_invariants;
mod relay_rows;
mod relay_spec;
mod report;
mod shuttle_broker;
mod shuttle_relay;
mod shuttle_rt;

use std::any::Any;
use std::fmt::Write as _;
use std::time::Duration;

use sim::strategy::StrategyKind;

use shuttle_rt::Sched;

/// The sampling strategies compared: braid's and shuttle's random and PCT (depth 3).
pub const STRATEGIES: [(&str, StrategyKind, Sched); 2] = [
    ("random", StrategyKind::Random, Sched::Random),
    (
        "PCT d3",
        StrategyKind::Pct { depth: 3 },
        Sched::Pct { depth: 3 },
    ),
];

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

pub struct Budget {
    pub quick: bool,
    /// Runs for the throughput rows.
    pub runs: u64,
    /// Seeds for the time-to-first-violation rows.
    pub seeds: u64,
    /// Runs each seed may take to find the violation.
    pub find_cap: u64,
    /// Wall time each exhaustive search may take.
    pub exhaustive_cap: Duration,
    /// Only this model's rows (`--only broker|relay`); both by default.
    pub only: Option<String>,
    /// Only the runs/s rows (`--throughput`).
    pub throughput_only: bool,
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
                only: None,
                throughput_only: false,
            }
        } else {
            Budget {
                quick,
                runs: 20_000,
                seeds: 20,
                find_cap: 100_000,
                exhaustive_cap: Duration::from_secs(300),
                only: None,
                throughput_only: false,
            }
        };
        if let Some(i) = args.iter().position(|a| a == "--cap") {
            let secs: u64 = args
                .get(i + 1)
                .and_then(|s| s.parse().ok())
                .expect("--cap takes a number of seconds");
            budget.exhaustive_cap = Duration::from_secs(secs);
        }
        if let Some(i) = args.iter().position(|a| a == "--only") {
            match args.get(i + 1).map(String::as_str) {
                Some(model @ ("broker" | "relay")) => budget.only = Some(model.to_string()),
                _ => {
                    eprintln!("--only takes broker or relay");
                    std::process::exit(2);
                }
            }
        }
        budget.throughput_only = args.iter().any(|a| a == "--throughput");
        for a in &args {
            if a.starts_with("--")
                && !["--quick", "--cap", "--only", "--throughput"].contains(&a.as_str())
            {
                eprintln!(
                    "unknown option {a} (options: --quick, --cap SECS, --only broker|relay, \
                     --throughput)"
                );
                std::process::exit(2);
            }
        }
        budget
    }

    pub fn command(&self) -> String {
        let mut cmd = "cargo run --release -p peers".to_string();
        let default_cap = if self.quick { 30 } else { 300 };
        if self.quick
            || self.exhaustive_cap.as_secs() != default_cap
            || self.only.is_some()
            || self.throughput_only
        {
            cmd.push_str(" --");
        }
        if self.quick {
            cmd.push_str(" --quick");
        }
        if self.exhaustive_cap.as_secs() != default_cap {
            write!(cmd, " --cap {}", self.exhaustive_cap.as_secs()).unwrap();
        }
        if let Some(model) = &self.only {
            write!(cmd, " --only {model}").unwrap();
        }
        if self.throughput_only {
            cmd.push_str(" --throughput");
        }
        cmd
    }
}

fn main() {
    let budget = Budget::from_args();
    quiet_panics();
    let mut rows = Vec::new();
    let runs = |model: &str| budget.only.as_deref().is_none_or(|only| only == model);
    if runs("broker") {
        broker_rows::rows(&budget, &mut rows);
    }
    if runs("relay") {
        relay_rows::rows(&budget, &mut rows);
    }
    report::print_table(&budget, &rows);
}
