//! A test's search split over shards (issue 30, item 5): each shard of a `braid::check` writes
//! its summary, and `braid merge` joins them into what one machine gives: on a program that
//! holds, the same runs, distinct schedules and end states as the unsplit search (written as
//! shard 1 of 1); on one that fails, the same verdict and the same first failing run.

use std::path::{Path, PathBuf};
use std::process::Command;

use braid::engine::strategy::Reduction;
use braid::sync::Mutex;
use braid::{Outcome, Strategy};

/// Three tasks that each add to one counter three times, then a check that all counted: holds
/// with the lock held across the read and the write, fails (a lost update) without it. Enough
/// schedules that 600 random runs are mostly distinct, so a shard that ran another shard's
/// indices would show in the merged count.
fn counter(
    racy: bool,
) -> impl Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> + Clone + Send + Sync {
    move || {
        Box::pin(async move {
            let n = std::sync::Arc::new(Mutex::new(0));
            let tasks: Vec<_> = (0..3)
                .map(|_| {
                    let n = n.clone();
                    braid::spawn(async move {
                        for _ in 0..3 {
                            if racy {
                                let v = *n.lock().await;
                                braid::task::yield_now().await;
                                *n.lock().await = v + 1;
                            } else {
                                let mut g = n.lock().await;
                                let v = *g;
                                braid::task::yield_now().await;
                                *g = v + 1;
                            }
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(*n.lock().await, 9, "an update was lost");
        })
    }
}

/// Runs shard `i` of `n` of the check named `name`; its summary file.
fn shard(
    dir: &Path,
    name: &str,
    racy: bool,
    strategy: Strategy,
    runs: u64,
    (i, n): (u64, u64),
) -> (PathBuf, Outcome) {
    let report = braid::check(counter(racy))
        .name(name)
        .strategy(strategy)
        .runs(runs)
        .shard(i, n)
        .out(dir)
        .run();
    let file = dir.join("shards").join(format!("{name}.{i}-of-{n}.json"));
    assert!(file.exists(), "{}", file.display());
    (file, report.outcome)
}

fn merge(files: &[PathBuf]) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("merge")
        .args(files)
        .args(["--format", "json"])
        .output()
        .expect("braid runs");
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn read(file: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn four_shards_of_a_holding_test_merge_into_the_one_machine_summary() {
    let dir = tempfile::tempdir().unwrap();
    for (strategy, runs) in [(Strategy::Random, 600), (Strategy::Pct { depth: 3 }, 600)] {
        let name = format!("holds-{}", runs);
        let (whole, outcome) = shard(dir.path(), &name, false, strategy, runs, (1, 1));
        assert!(matches!(outcome, Outcome::Holds { .. }), "{outcome:?}");
        let parts: Vec<PathBuf> = (1..=4)
            .map(|i| shard(dir.path(), &name, false, strategy, runs, (i, 4)).0)
            .collect();
        let merged = &merge(&parts)[0];
        let one = &merge(&[whole])[0];
        for key in [
            "runs",
            "distinct_schedules",
            "end_states",
            "outcome",
            "seed",
            "strategy",
        ] {
            assert_eq!(merged[key], one[key], "{strategy:?} {key}");
        }
        assert_eq!(merged["runs"], runs);
        assert_eq!(merged["outcome"], "holds");
        assert!(one["distinct_schedules"].as_u64().unwrap() > 100, "{one}");
    }
}

/// Plain DFS's shards explore every schedule once: the same runs as one machine. With the
/// default reduction (visited states, kept on where tasks yield fairly) each shard prunes only
/// by the states it has explored itself, so the shards may run more than one machine (here
/// 9,520 against 3,360), reaching the same end states.
#[test]
fn four_shards_of_an_exhaustive_search_cover_every_schedule_once() {
    for reduction in [Reduction::None, Reduction::VisitedStates] {
        let dir = tempfile::tempdir().unwrap();
        let dfs = Strategy::Dfs {
            preemption_bound: None,
            reduction,
        };
        let run = |i, n| {
            let report = braid::check(counter(false))
                .name("dfs")
                .strategy(dfs)
                .shard(i, n)
                .out(dir.path())
                .run();
            assert!(
                matches!(report.outcome, Outcome::Holds { .. }),
                "{:?}",
                report.outcome
            );
            dir.path()
                .join("shards")
                .join(format!("dfs.{i}-of-{n}.json"))
        };
        let whole = read(&run(1, 1))[0].clone();
        let merged = merge(&(1..=4).map(|i| run(i, 4)).collect::<Vec<_>>())[0].clone();
        assert_eq!(whole["exhaustive"], true);
        let same: &[&str] = match reduction {
            Reduction::None => &[
                "runs",
                "distinct_schedules",
                "end_states",
                "exhaustive",
                "outcome",
            ],
            _ => &["end_states", "exhaustive", "outcome"],
        };
        for key in same {
            assert_eq!(merged[key], whole[key], "{reduction:?} {key}");
        }
        let runs = |s: &serde_json::Value| s["runs"].as_u64().unwrap();
        assert!(runs(&merged) >= runs(&whole), "{reduction:?}");
    }
}

#[test]
fn four_shards_of_a_failing_test_give_its_verdict_and_first_failing_run() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, outcome) = shard(dir.path(), "lost", true, Strategy::Random, 2000, (1, 1));
    assert!(matches!(outcome, Outcome::Failed(_)), "{outcome:?}");
    let one = read(&whole)[0].clone();
    let parts: Vec<PathBuf> = (1..=4)
        .map(|i| shard(dir.path(), "lost", true, Strategy::Random, 2000, (i, 4)).0)
        .collect();
    // Each shard ran its own indices: i-1, i-1+4, ...
    for (i, part) in parts.iter().enumerate() {
        let first = read(part)[0]["violations"][0]["first_run"]
            .as_u64()
            .unwrap();
        assert_eq!(first % 4, i as u64, "{}", part.display());
    }
    let merged = merge(&parts)[0].clone();
    assert_eq!(merged["outcome"], "violation");
    assert_eq!(merged["matches_expectation"], false);
    let (m, o) = (&merged["violations"][0], &one["violations"][0]);
    assert_eq!(m["invariant"], o["invariant"]);
    assert_eq!(m["first_run"], o["first_run"]);
    assert!(m["message"]
        .as_str()
        .unwrap()
        .contains("an update was lost"));
}
