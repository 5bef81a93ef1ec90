//! One verdict (issue 31, item 4): every entry point judges a search's summary with
//! `Summary::verdict`, so a DFS asked to prove every schedule that runs out of budget after
//! finishing the levels within k preemptions is inconclusive everywhere (it once passed under
//! `braid::check` and not under `sim::check::Check`), and a bounded DFS that finished its bound
//! holds everywhere: `sim::check::Check` on a scenario's model, `braid explore` on the scenario,
//! and `braid::check` on a user test.

use std::process::Command;

use braid::Outcome;
use models::registry;
use sim::check::Verdict;
use sim::strategy::StrategyKind;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const SCENARIO: &str = "scenarios/broker-bound-first.toml";

/// `braid explore` of the scenario with `args`: its outcome.
fn explore(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args([
            "explore",
            SCENARIO,
            "--format",
            "json",
            "--no-shrink",
            "--jobs",
            "1",
        ])
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("braid runs");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    json[0]["outcome"].as_str().unwrap().to_string()
}

fn engine_check(strategy: StrategyKind, runs: u64) -> Verdict {
    let path = std::path::Path::new(REPO).join(SCENARIO);
    registry::scenario_check(path.to_str().unwrap())
        .expect("scenario loads")
        .strategy(strategy)
        .runs(runs)
        .run()
}

/// Two tasks, each taking a braid lock three times: more schedules than 30 runs cover.
fn user_check(strategy: braid::Strategy, runs: u64) -> Outcome {
    braid::check(|| async {
        let m = std::sync::Arc::new(braid::sync::Mutex::new(0));
        let other = {
            let m = m.clone();
            braid::spawn(async move {
                for _ in 0..3 {
                    *m.lock().await += 1;
                }
            })
        };
        for _ in 0..3 {
            *m.lock().await += 1;
        }
        other.await.unwrap();
    })
    .plain_state()
    .strategy(strategy)
    .runs(runs)
    .run()
    .outcome
}

#[test]
fn an_unbounded_dfs_cut_by_its_budget_is_inconclusive_everywhere() {
    let dfs = StrategyKind::dfs(None);
    // The scenario's proof takes 20 runs on one job (its two publishers are searched once per
    // orbit; 40 before): 10 cannot finish it.
    assert!(
        matches!(engine_check(dfs, 10), Verdict::Inconclusive(_)),
        "sim::check::Check"
    );
    assert_eq!(
        explore(&["--strategy", "dfs", "--runs", "10"]),
        "inconclusive"
    );
    assert!(
        matches!(user_check(dfs, 30), Outcome::Inconclusive(_)),
        "braid::check"
    );
}

#[test]
fn a_bounded_dfs_that_finished_its_bound_holds_everywhere() {
    let within_one = StrategyKind::dfs(Some(1));
    assert!(
        matches!(engine_check(within_one, 1_000_000), Verdict::Holds { .. }),
        "sim::check::Check"
    );
    let cli = explore(&["--strategy", "dfs", "--preemption-bound", "1"]);
    assert_eq!(cli, "holds");
    assert!(
        matches!(user_check(within_one, 1_000_000), Outcome::Holds { .. }),
        "braid::check"
    );
}
