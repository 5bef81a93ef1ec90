//! The broker bind race's rows (issue 5: the race against shuttle and loom): runs/s, runs and
//! time to the first delivery-order violation, and the exhaustive proof of the fix.

use crate::broker_spec::{Spec, Variant};
use crate::report::{self, progress, Row, Trials, REDUCTIONS};
use crate::{braid_side, loom_broker, shuttle_broker, Budget};

pub fn rows(budget: &Budget, rows: &mut Vec<Row>) {
    throughput_rows(budget, rows);
    if budget.throughput_only {
        return;
    }
    // The race as found in review: braid's `broker-bind-race` scenario (await grain), and braid
    // at access grain (shuttle's grain).
    first_violation_rows(
        budget,
        rows,
        Spec {
            variant: Variant::Original,
            publishers: 1,
        },
        &["await", "access"],
    );
    // The shipped fix at access grain (braid's `broker-unbound-behind-access` finding): a
    // router preempted inside behind() between its count and awaiting_bind loads.
    first_violation_rows(
        budget,
        rows,
        Spec {
            variant: Variant::UnboundBehind,
            publishers: 2,
        },
        &["access"],
    );
    exhaustive_rows(budget, rows);
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
    for (name, kind, sched) in crate::STRATEGIES {
        progress(&format!("throughput, {name}: braid"));
        let b = braid_side::throughput(model.as_ref(), kind, 1, budget.runs);
        progress(&format!("throughput, {name}: shuttle"));
        let s = shuttle_broker::explore(spec, sched, 1, budget.runs as usize);
        rows.push(report::throughput_row(
            format!(
                "runs/s, {name}, bound-first 2 pub, {} runs, seed 1",
                budget.runs
            ),
            &b,
            format!("shuttle {name}"),
            &s,
        ));
    }
}

/// 2. Runs and wall time to the first delivery-order violation of `spec`, median over the
///    seeds: braid at each of `grains`, and shuttle.
fn first_violation_rows(budget: &Budget, rows: &mut Vec<Row>, spec: Spec, grains: &[&str]) {
    let label = format!("{} {} pub", spec.variant.name(), spec.publishers);
    for (name, kind, sched) in crate::STRATEGIES {
        progress(&format!(
            "first violation, {label}, {name}: shuttle, {} seeds",
            budget.seeds
        ));
        let mut s = Trials::default();
        for seed in 1..=budget.seeds {
            let o = shuttle_broker::explore(spec, sched, seed, budget.find_cap as usize);
            match &o.failure {
                Some(f) if f.starts_with("delivery-order") => {
                    s.push(Some((o.runs as u64, o.elapsed)));
                }
                Some(f) => {
                    eprintln!("[peers] shuttle {name}: unexpected failure seed {seed}: {f}");
                    s.push(None);
                }
                None => s.push(None),
            }
        }
        for &grain in grains {
            progress(&format!(
                "first violation, {label}, {name}: braid {grain} grain, {} seeds",
                budget.seeds
            ));
            let model = braid_side::broker(spec.variant.name(), spec.publishers, grain);
            let mut b = Trials::default();
            for seed in 1..=budget.seeds {
                let found =
                    braid_side::first_violation(model.as_ref(), kind, seed, budget.find_cap);
                b.push(found.map(|(runs, time, _)| (runs, time)));
            }
            let scenario = match (spec.variant, grain) {
                (Variant::Original, "await") => "broker-bind-race (await grain)".to_string(),
                _ => format!("{grain} grain"),
            };
            rows.extend(report::first_violation_rows(
                budget,
                &format!("{label}, {name}, median; braid {scenario}"),
                &b,
                &format!("shuttle {name}"),
                &s,
            ));
        }
    }
}

/// 3. Exhaustive proof of bound-first (access grain) with 1 and 2 publishers: braid's DFS with
///    with each reduction (visited states, POR) and without, and loom.
fn exhaustive_rows(budget: &Budget, rows: &mut Vec<Row>) {
    let cap = budget.exhaustive_cap;
    for publishers in [1, 2] {
        let spec = Spec {
            variant: Variant::BoundFirst,
            publishers,
        };
        progress(&format!(
            "exhaustive, {publishers} publisher(s): loom (cap {})",
            report::secs(cap)
        ));
        let l = loom_broker::check(spec, cap);
        let model = braid_side::broker("bound-first", publishers, "access");
        for reduction in REDUCTIONS {
            let how = report::dfs_label(reduction);
            progress(&format!(
                "exhaustive, {publishers} publisher(s): braid {how} (cap {})",
                report::secs(cap)
            ));
            let b = braid_side::exhaustive(model.as_ref(), None, reduction, cap);
            rows.push(Row {
                what: format!(
                    "exhaustive bound-first, {publishers} pub, access grain; braid {how}"
                ),
                braid: report::dfs_cell(&b, reduction, cap),
                peer: "loom".into(),
                peer_result: report::loom_cell(&l, cap),
                ratio: report::exhaustive_ratio(&b, &l),
            });
        }
    }
}
