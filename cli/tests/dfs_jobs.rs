//! A DFS over two jobs reports the same and writes the same replay file on every run: each job
//! explores a fixed share of the subtrees with its own visited states, and the merged result
//! takes the lowest run in job order, not the first to arrive.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::process::Command;

fn explore(out: &std::path::Path) -> (serde_json::Value, Vec<u8>) {
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args([
            "explore",
            "broker-bind-race",
            "--strategy",
            "dfs",
            "--preemption-bound",
            "1",
            "--jobs",
            "2",
            "--no-shrink",
            "--format",
            "json",
            "--out",
        ])
        .arg(out)
        .current_dir(REPO)
        .output()
        .expect("braid runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{err}");
    let reports: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let r = reports[0].clone();
    let file = r["violations"][0]["replay_file"]
        .as_str()
        .unwrap_or_else(|| panic!("a violation: {r}"));
    let bytes = std::fs::read(file).expect("the replay file");
    (r, bytes)
}

#[test]
fn dfs_with_two_jobs_writes_the_same_replay_file_every_time() {
    // Before the fix, jobs claimed subtrees as they came and shared visited states: about
    // every other run of this search wrote the file of another schedule (first in run 58, or
    // run 1), and counted other runs.
    let dirs: Vec<_> = (0..8).map(|_| tempfile::tempdir().unwrap()).collect();
    let runs: Vec<_> = dirs.iter().map(|d| explore(d.path())).collect();
    let (first, file) = &runs[0];
    let replay: serde_json::Value = serde_json::from_slice(file).unwrap();
    // The file says what the summary says: the run that found it, the invariant.
    let v = &first["violations"][0];
    assert_eq!(replay["found"]["run"], v["first_run"], "{replay}\n{first}");
    assert_eq!(replay["violation"]["invariant"], v["invariant"]);
    for (i, (r, bytes)) in runs.iter().enumerate().skip(1) {
        assert!(bytes == file, "run {i} wrote a different replay file");
        for key in ["runs", "distinct_schedules", "pruned", "end_states"] {
            assert_eq!(r[key], first[key], "run {i}: {key}");
        }
        let (a, b) = (&r["violations"][0], v);
        for key in ["first_run", "runs_to_first", "count", "invariant"] {
            assert_eq!(a[key], b[key], "run {i}: {key}");
        }
    }
}
