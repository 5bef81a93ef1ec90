use models::registry;
use sim::explore::Explorer;
use sim::strategy::StrategyKind;

#[test]
fn smoke() {
    for (variant, grain, pubs) in [
        ("original", "await", 1),
        ("gate-lane", "await", 1),
        ("unbound-behind", "await", 2),
        ("bound-first", "await", 2),
        ("unbound-behind", "access", 2),
        ("bound-first", "access", 2),
    ] {
        let params = serde_json::json!({"grain": grain, "publishers": pubs});
        let model = registry::build("broker", variant, &params).unwrap();
        for strategy in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
            let s = Explorer::new(model.as_ref())
                .strategy(strategy)
                .seed(1)
                .runs(20000)
                .check_determinism(true)
                .run()
                .unwrap();
            println!(
                "{variant} {grain} {:?}: runs {} distinct {} steps {} rps {:.0} viol {:?}",
                strategy,
                s.runs,
                s.distinct_schedules,
                s.max_steps_seen,
                s.runs_per_sec(),
                s.violations
                    .iter()
                    .map(|f| (f.invariant.clone(), f.first_run, f.count, f.message.clone()))
                    .collect::<Vec<_>>()
            );
        }
    }
}
