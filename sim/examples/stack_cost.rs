//! What a stackful task costs per step: the same model (tasks that each take `STEPS` scheduling
//! points) explored with stackless tasks and with stackful ones, at the same seed and runs.
//!
//! `cargo run --release -p sim --example stack_cost`

use std::rc::Rc;
use std::time::Instant;

use sim::explore::Explorer;
use sim::strategy::StrategyKind;
use sim::{Model, Monitor, Violation};

const TASKS: usize = 3;
const STEPS: usize = 30;
const RUNS: u64 = 20_000;

struct Steps {
    stackful: bool,
}

struct Nothing;

impl Monitor for Nothing {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}

impl Model for Steps {
    fn start(&self) -> Rc<dyn Monitor> {
        for t in 0..TASKS {
            sim::spawn(format!("t{t}"), async {
                for _ in 0..STEPS {
                    sim::yield_point("io").await;
                }
            });
        }
        Rc::new(Nothing)
    }

    fn stackful_tasks(&self) -> bool {
        self.stackful
    }
}

fn main() {
    println!("{TASKS} tasks x {STEPS} scheduling points, {RUNS} random runs, one job");
    let mut rates = Vec::new();
    for stackful in [false, true, false, true] {
        let model = Steps { stackful };
        let start = Instant::now();
        let summary = Explorer::new(&model)
            .strategy(StrategyKind::Random)
            .seed(1)
            .runs(RUNS)
            .run()
            .expect("explore");
        let secs = start.elapsed().as_secs_f64();
        let steps = (TASKS * (STEPS + 1)) as f64 * summary.runs as f64;
        let ns_per_step = secs * 1e9 / steps;
        println!(
            "{:<10} {:>9.0} runs/s {:>7.1} ns/step",
            if stackful { "stackful" } else { "stackless" },
            summary.runs as f64 / secs,
            ns_per_step
        );
        rates.push((stackful, ns_per_step));
    }
    let avg = |s: bool| {
        let v: Vec<f64> = rates.iter().filter(|r| r.0 == s).map(|r| r.1).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    println!(
        "stackful costs {:.1} ns more per step ({:.2}x)",
        avg(true) - avg(false),
        avg(true) / avg(false)
    );
}
