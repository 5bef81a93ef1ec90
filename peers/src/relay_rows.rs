//! The relay same-ID replacement's rows: two same-ID REQs, the newer one must own the id.
//! braid runs its scenario files; shuttle and loom run `relay_threads.rs` with the same
//! parameters (read from the same files).
//!
//! - runs/s on the fixed variant (`relay-same-id-generation-fence`: every run goes to the end);
//! - runs and time to the first violation on the variant before the change
//!   (`relay-same-id-register-token`: newest-owns or no-stale-frame), median over the seeds;
//! - the fixed variant's space: exhausted without a preemption bound, and within the scenario's
//!   own preemption bound (braid's DFS with visited states, with POR, and plain
//!   against loom's DPOR, bounded likewise) — and, within that bound, the same parameters on the
//!   `admission` variant, whose unfenced history breaks no-stale-frame.

use std::collections::BTreeMap;

use sim::scenario::{Expected, Scenario};

use crate::relay_spec::Spec;
use crate::report::{self, progress, Row, Trials, REDUCTIONS};
use crate::{braid_side, loom_relay, shuttle_relay, Budget};

const FIXED: &str = "relay-same-id-generation-fence";
const BUGGY: &str = "relay-same-id-register-token";

pub fn rows(budget: &Budget, rows: &mut Vec<Row>) {
    throughput_rows(budget, rows);
    if budget.throughput_only {
        return;
    }
    first_violation_rows(budget, rows);
    exhaustive_rows(budget, rows);
}

/// The peers' spec for a scenario braid runs.
fn spec(scenario: &Scenario) -> Spec {
    assert_eq!(
        scenario.model, "relay",
        "{} is not a relay scenario",
        scenario.name
    );
    Spec::from_scenario(&scenario.variant, &scenario.params)
        .unwrap_or_else(|e| panic!("{}: {e}", scenario.name))
}

/// 1. Runs per second on the fixed variant, every run counted.
fn throughput_rows(budget: &Budget, rows: &mut Vec<Row>) {
    let (scenario, model) = braid_side::scenario(FIXED);
    let spec = spec(&scenario);
    for (name, kind, sched) in crate::STRATEGIES {
        progress(&format!("relay throughput, {name}: braid"));
        let b = braid_side::throughput(model.as_ref(), kind, 1, budget.runs);
        progress(&format!("relay throughput, {name}: shuttle"));
        let s = shuttle_relay::explore(spec, sched, 1, budget.runs as usize);
        rows.push(report::throughput_row(
            format!(
                "relay same-id: runs/s, {name}, {}, {} runs, seed 1",
                scenario.variant, budget.runs
            ),
            &b,
            format!("shuttle {name}"),
            &s,
        ));
    }
}

/// 2. Runs and wall time to the first violation of the buggy variant, median over the seeds. A
///    violation counts if it is one the scenario expects; any other is reported, not counted.
fn first_violation_rows(budget: &Budget, rows: &mut Vec<Row>) {
    let (scenario, model) = braid_side::scenario(BUGGY);
    let spec = spec(&scenario);
    let expected = |invariant: &str| scenario.expected.matches([invariant]);
    assert!(
        matches!(scenario.expected, Expected::Violation(_)),
        "{BUGGY} is expected to fail"
    );
    for (name, kind, sched) in crate::STRATEGIES {
        progress(&format!(
            "relay first violation, {name}: shuttle, {} seeds",
            budget.seeds
        ));
        let mut s = Trials::default();
        let mut s_found = BTreeMap::new();
        for seed in 1..=budget.seeds {
            let o = shuttle_relay::explore(spec, sched, seed, budget.find_cap as usize);
            match &o.failure {
                Some(f) if expected(invariant_of(f)) => {
                    *s_found.entry(invariant_of(f).to_string()).or_insert(0) += 1;
                    s.push(Some((o.runs as u64, o.elapsed)));
                }
                Some(f) => {
                    eprintln!("[peers] shuttle relay {name}: unexpected failure seed {seed}: {f}");
                    s.push(None);
                }
                None => s.push(None),
            }
        }
        progress(&format!(
            "relay first violation, {name}: braid, {} seeds",
            budget.seeds
        ));
        let mut b = Trials::default();
        let mut b_found = BTreeMap::new();
        for seed in 1..=budget.seeds {
            match braid_side::first_violation(model.as_ref(), kind, seed, budget.find_cap) {
                Some((runs, time, invariant)) if expected(&invariant) => {
                    *b_found.entry(invariant).or_insert(0) += 1;
                    b.push(Some((runs, time)));
                }
                Some((_, _, invariant)) => {
                    eprintln!(
                        "[peers] braid relay {name}: unexpected violation seed {seed}: {invariant}"
                    );
                    b.push(None);
                }
                None => b.push(None),
            }
        }
        progress(&format!(
            "relay first violation, {name}: first broken, braid {b_found:?}, shuttle {s_found:?}"
        ));
        rows.extend(report::first_violation_rows(
            budget,
            &format!("relay same-id {}, {name}, median", scenario.variant),
            &b,
            &format!("shuttle {name}"),
            &s,
        ));
    }
}

/// The invariant a peer's failure names (`<invariant>: <message>`).
fn invariant_of(failure: &str) -> &str {
    failure.split(':').next().unwrap_or(failure)
}

/// 3. The fixed variant's space, without a preemption bound and then within the scenario's
///    (and the admission variant's within it): braid's DFS with each reduction and without, and loom.
fn exhaustive_rows(budget: &Budget, rows: &mut Vec<Row>) {
    let cap = budget.exhaustive_cap;
    let (scenario, model) = braid_side::scenario(FIXED);
    let spec = spec(&scenario);
    let variant = &scenario.variant;
    progress(&format!(
        "relay exhaustive: loom (cap {})",
        report::secs(cap)
    ));
    let l = loom_relay::check(spec, cap, None);
    for reduction in REDUCTIONS {
        let how = report::dfs_label(reduction);
        progress(&format!(
            "relay exhaustive: braid {how} (cap {})",
            report::secs(cap)
        ));
        let b = braid_side::exhaustive(model.as_ref(), None, reduction, cap);
        rows.push(Row {
            what: format!("relay same-id: exhaustive {variant}; braid {how}"),
            braid: report::dfs_cell(&b, reduction, cap),
            peer: "loom".into(),
            peer_result: report::loom_cell(&l, cap),
            ratio: report::exhaustive_ratio(&b, &l),
        });
    }
    let Some(bound) = scenario.explore.preemption_bound else {
        return;
    };
    // Within the scenario's bound: the fixed variant, then the same parameters on `admission`
    // (the token at admission, history unfenced), which has a stale-frame violation within it.
    let admission = (
        "admission",
        braid_side::model("relay", "admission", &scenario.params),
    );
    for (variant, model) in [(variant.as_str(), model), admission] {
        let spec = Spec::from_scenario(variant, &scenario.params)
            .unwrap_or_else(|e| panic!("relay {variant}: {e}"));
        progress(&format!(
            "relay {variant} within {bound} preemptions: loom (cap {})",
            report::secs(cap)
        ));
        let l = loom_relay::check(spec, cap, Some(bound));
        let what = if variant == scenario.variant {
            format!("{variant} within {bound} preemptions (the scenario's bound)")
        } else {
            format!("{variant} (same params) within {bound} preemptions")
        };
        for reduction in REDUCTIONS {
            let how = report::dfs_label(reduction);
            progress(&format!(
                "relay {variant} within {bound} preemptions: braid {how} (cap {})",
                report::secs(cap)
            ));
            let b = braid_side::exhaustive(model.as_ref(), Some(bound), reduction, cap);
            rows.push(Row {
                what: format!("relay same-id: {what}; braid {how}"),
                braid: report::dfs_cell(&b, reduction, cap),
                peer: format!("loom, preemption bound {bound}"),
                peer_result: report::loom_cell(&l, cap),
                ratio: report::exhaustive_ratio(&b, &l),
            });
        }
    }
}
