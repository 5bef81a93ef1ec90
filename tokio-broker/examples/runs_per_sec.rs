//! Runs per second: the tokio-shaped broker (this crate's `sim` build) against the model of
//! the same broker (models/src/broker), at the same grain and sizes, same strategy and seed,
//! one job. `cargo run --release -p tokio-broker --example runs_per_sec [-- RUNS]`

use std::rc::Rc;

use braid::engine::explore::Explorer;
use braid::engine::strategy::StrategyKind;
use braid::engine::{Grain, Model, Monitor, Violation};
use tokio_broker::sim::broker::{self, Config, Variant, Workload};

/// The tokio-shaped broker's restart scenario as an engine model (what `braid::check` runs,
/// with its own parameters).
struct TokioShaped {
    config: Config,
    workload: Workload,
    grain: Grain,
}

impl Model for TokioShaped {
    fn start(&self) -> Rc<dyn Monitor> {
        let (config, workload) = (self.config, self.workload);
        braid::engine::task::spawn_main("main", async move {
            broker::restart(config, workload).await;
        });
        Rc::new(Nothing)
    }

    fn grain(&self) -> Grain {
        self.grain
    }

    fn stackful_tasks(&self) -> bool {
        true
    }
}

struct Nothing;

impl Monitor for Nothing {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}

fn main() {
    let runs: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS is a number"))
        .unwrap_or(20_000);
    println!("{runs} runs each, random strategy, seed 1, one job, release");
    println!(
        "{:<14} {:<7} {:<22} {:>12} {:>12} {:>7} {:>7}",
        "variant", "grain", "size", "tokio-shaped", "model", "steps", "steps"
    );
    // bound-first holds, so every run goes to its end in both. 2x1 w1 inflight1 is the size of
    // the peers broker (`cargo run --release -p peers -- --only broker --throughput`), which
    // shuttle runs too.
    for variant in [Variant::BoundFirst] {
        for grain in [Grain::Access, Grain::Await] {
            for (publishers, messages, window, inflight) in
                [(1, 1, 1, 1), (2, 1, 1, 1), (2, 2, 2, 2)]
            {
                let mut config = Config::new(variant);
                config.window = window;
                let tokio_shaped = TokioShaped {
                    config,
                    workload: Workload::new(publishers, messages, inflight),
                    grain,
                };
                let params = serde_json::json!({
                    "publishers": publishers,
                    "messages": messages,
                    "window": window,
                    "lane_capacity": 1,
                    "inflight": inflight,
                    "grain": grain.name(),
                });
                let model = models::registry::build("broker", variant.model_name(), &params)
                    .expect("the broker model");
                let explore = |m: &dyn Model| {
                    Explorer::new(m)
                        .strategy(StrategyKind::Random)
                        .seed(1)
                        .runs(runs)
                        .run()
                        .expect("explore")
                };
                let a = explore(&tokio_shaped);
                let b = explore(model.as_ref());
                println!(
                    "{:<14} {:<7} {:<22} {:>12.0} {:>12.0} {:>7} {:>7}",
                    variant.name(),
                    grain.name(),
                    format!("{publishers}x{messages} w{window} inflight{inflight}"),
                    a.runs_per_sec(),
                    b.runs_per_sec(),
                    a.max_steps_seen,
                    b.max_steps_seen,
                );
            }
        }
    }
}
