//! Shard summaries are self-describing (format, shard i/n of which budget, scenario, seed) with
//! digests as hex strings, and `braid merge` refuses a set that is not exactly shards 1..=n of
//! one split.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn braid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("braid runs")
}

/// `braid explore broker-bind-race` shard `shard` (pct, 2000 runs) as JSON, written to `dir`.
fn shard(dir: &Path, shard: &str, runs: &str) -> (PathBuf, serde_json::Value) {
    let o = braid(&[
        "explore",
        "broker-bind-race",
        "--strategy",
        "pct",
        "--runs",
        runs,
        "--jobs",
        "1",
        "--no-shrink",
        "--format",
        "json",
        "--shard",
        shard,
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let path = dir.join(format!("{}-{runs}.json", shard.replace('/', "of")));
    std::fs::write(&path, &o.stdout).unwrap();
    (path, serde_json::from_slice(&o.stdout).unwrap())
}

fn merge(files: &[&Path]) -> Output {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    braid(&args)
}

fn assert_refused(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "expected '{needle}' in {err}");
}

#[test]
fn a_shard_says_what_it_is_and_writes_digests_as_hex() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json) = shard(dir.path(), "1/2", "2000");
    let r = &json[0];
    assert_eq!(r["format"], 1);
    assert_eq!(r["scenario"], "broker-bind-race");
    assert_eq!(r["seed"], 1);
    assert_eq!(
        r["shard"],
        serde_json::json!({"index": 1, "count": 2, "budget_runs": 2000})
    );
    for key in ["schedule_digests", "end_state_digests"] {
        let digests = r[key].as_array().unwrap();
        assert!(!digests.is_empty());
        for d in digests {
            let hex = d.as_str().expect("a string, not a number");
            assert_eq!(hex.len(), 16);
            assert!(u64::from_str_radix(hex, 16).is_ok());
        }
    }
}

#[test]
fn merge_refuses_a_duplicated_missing_or_mismatched_shard() {
    let dir = tempfile::tempdir().unwrap();
    let (one, one_json) = shard(dir.path(), "1/2", "2000");
    let (two, two_json) = shard(dir.path(), "2/2", "2000");
    let merged = merge(&[&one, &two]);
    assert_eq!(merged.status.code(), Some(1), "a violation found");
    let merged: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(merged[0]["format"], 1);
    assert_eq!(merged[0]["runs"], 2000);
    assert!(merged[0].get("shard").is_none());
    // PCT confidence over every shard's runs, not one shard's.
    let confidence = |v: &serde_json::Value| v[0]["pct_confidence"].as_f64();
    if let (Some(m), Some(a), Some(b)) = (
        confidence(&merged),
        confidence(&one_json),
        confidence(&two_json),
    ) {
        assert!(m >= a.max(b), "{m} vs {a}, {b}");
    }

    assert_refused(&merge(&[&one, &one]), "shard 1/2 is given twice");
    assert_refused(&merge(&[&one]), "shard 2/2 missing");
    let (other, _) = shard(dir.path(), "2/2", "3000");
    assert_refused(&merge(&[&one, &other]), "not one split");

    // A summary that is not a shard, and one from before summaries carried a format.
    let o = braid(&[
        "explore",
        "broker-bind-race",
        "--runs",
        "100",
        "--jobs",
        "1",
        "--no-shrink",
        "--format",
        "json",
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    let whole = dir.path().join("whole.json");
    std::fs::write(&whole, &o.stdout).unwrap();
    assert_refused(&merge(&[&whole]), "is not a shard");
    let mut old = one_json.clone();
    old[0].as_object_mut().unwrap().remove("format");
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    assert_refused(&merge(&[&old_path, &two]), "summary of format 1");
}
