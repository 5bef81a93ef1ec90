//! A report's "first in run N" counts runs as its "runs" does: a DFS's run index also counts the
//! runs its reduction cut short, which once made a report say "runs 14 ... first in run 190".

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::process::Command;

#[test]
fn the_first_failing_run_is_numbered_among_the_runs_counted() {
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args([
            "explore",
            "broker-bound-first-2x2",
            "--strategy",
            "dfs",
            "--jobs",
            "1",
        ])
        .args(["--runs", "500", "--no-shrink", "--format", "json", "--out"])
        .arg(out.path())
        .current_dir(REPO)
        .output()
        .expect("braid runs");
    let reports: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let report = &reports["scenarios"][0];
    let report = if report.is_null() {
        &reports[0]
    } else {
        report
    };
    let runs = report["runs"].as_u64().unwrap();
    let v = &report["violations"][0];
    let (index, counted) = (
        v["first_run"].as_u64().unwrap(),
        v["runs_to_first"].as_u64().unwrap(),
    );
    assert!(counted >= 1 && counted <= runs, "{counted} of {runs}");
    // The index counts pruned runs too: here far more than were counted.
    assert!(index >= counted, "index {index}, counted {counted}");
}
