use braid::engine::strategy::Random;
use braid::engine::{Grain, Model, Monitor, RunConfig, Violation};
use std::rc::Rc;
use tokio_broker::sim::broker::{self, Config, Variant, Workload};
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
    let which = std::env::args().nth(1).unwrap_or_default();
    let config = Config::new(Variant::BoundFirst);
    let params = serde_json::json!({"publishers":1,"messages":1,"window":1,"lane_capacity":1,"inflight":1,"grain":"access"});
    let model =
        models::registry::build("broker", Variant::BoundFirst.model_name(), &params).unwrap();
    let t = TokioShaped {
        config,
        workload: Workload::new(1, 1, 1),
        grain: Grain::Access,
    };
    let m: &dyn Model = if which == "model" { model.as_ref() } else { &t };
    let cfg = RunConfig {
        trace: true,
        ..RunConfig::default()
    };
    let (r, _) = braid::engine::run_once(m, Box::new(Random::new(1)), 0, &cfg);
    println!("{}", r.trace.unwrap().render_text());
}
