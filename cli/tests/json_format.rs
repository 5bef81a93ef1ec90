//! Every `--format json` output carries `"format": 1`, the version of its fields (README:
//! "JSON outputs"); merge and ci are checked in tests/merge.rs and tests/ci_outputs.rs.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::process::{Command, Output};

fn json(args: &[&str]) -> serde_json::Value {
    let o: Output = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("braid runs");
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("one JSON document")
}

#[test]
fn explore_replay_and_mutants_say_their_format() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let common = [
        "--runs", "500", "--jobs", "1", "--format", "json", "--out", out,
    ];
    let mut explore = vec!["explore", "broker-bind-race"];
    explore.extend(common);
    let explored = json(&explore);
    assert_eq!(explored[0]["format"], 1);
    let file = explored[0]["violations"][0]["replay_file"]
        .as_str()
        .unwrap();
    assert_eq!(json(&["replay", file, "--format", "json"])["format"], 1);
    let mut mutants = vec!["mutants", "broker-bound-first"];
    mutants.extend(common);
    assert_eq!(json(&mutants)[0]["format"], 1);
}
