//! `braid explore --test` and `braid replay` on a test's replay file drive `cargo test` with
//! the BRAID_* variables and read back each test's outcome. A stand-in `cargo` (a shell script
//! named by `CARGO`) records what it was asked and answers as a test would, so the plumbing is
//! tested without building a crate inside a test.

use std::path::Path;
use std::process::{Command, Output};

/// A fake cargo: logs its arguments and environment, then writes `outcome` as a test's report.
fn fake_cargo(dir: &Path, outcome: &str) -> std::path::PathBuf {
    let script = dir.join("cargo");
    let body = format!(
        "#!/bin/sh\necho \"$@\" > {log}/args\nenv | grep '^BRAID_' | sort > {log}/env\ncat > \"$BRAID_REPORT/t.json\" <<'JSON'\n{outcome}\nJSON\n",
        log = dir.display()
    );
    std::fs::write(&script, body).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    script
}

fn braid(cargo: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .env("CARGO", cargo)
        .output()
        .expect("braid runs")
}

#[test]
fn explore_test_passes_the_budget_and_reports_each_test() {
    let dir = tempfile::tempdir().unwrap();
    let held = r#"{"format":1,"test":"mycrate::it_holds","outcome":"holds","runs":12,"coverage":"every schedule"}"#;
    let cargo = fake_cargo(dir.path(), held);
    let o = braid(
        &cargo,
        &[
            "explore",
            "--test",
            "it_holds",
            "-p",
            "mycrate",
            "--runs",
            "500",
            "--seed",
            "9",
            "--strategy",
            "pct",
            "--depth",
            "2",
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("mycrate::it_holds: holds (12 runs: every schedule)"),
        "{stdout}"
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert_eq!(args.trim(), "test -p mycrate it_holds");
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    for var in [
        "BRAID_RUNS=500",
        "BRAID_SEED=9",
        "BRAID_STRATEGY=pct:2",
        "BRAID_OUT=",
        "BRAID_REPORT=",
    ] {
        assert!(env.contains(var), "{var} missing from\n{env}");
    }

    let failed = r#"{"format":1,"test":"mycrate::it_fails","outcome":"failed","invariant":"panic","message":"boom","source":"explored","file":"/x/y.json"}"#;
    let cargo = fake_cargo(dir.path(), failed);
    let o = braid(&cargo, &["explore", "--test", "it_fails"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAILED panic: boom"));
}

#[test]
fn replay_of_a_test_file_runs_that_test_alone_with_braid_replay() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let replay = serde_json::json!({
        "format": 2, "scenario": "front_door::lost_update", "model": "test", "variant": "braid",
        "params": {"package": "braid", "crate": "front_door", "file": "tests/front_door.rs"},
        "max_steps": 10000, "found": {"strategy": "dfs", "seed": 1, "run": 2},
        "violation": {"invariant": "panic", "message": "m", "step": 8},
        "steps": 8, "preemptions": 0, "digest": "0123456789abcdef", "decisions": []
    });
    std::fs::write(&file, replay.to_string()).unwrap();
    let again = r#"{"format":1,"test":"front_door::lost_update","outcome":"failed","invariant":"panic","message":"m","source":"replay"}"#;
    let o = braid(
        &fake_cargo(dir.path(), again),
        &["replay", file.to_str().unwrap()],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "reproduced: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert_eq!(
        args.trim(),
        "test -p braid --test front_door -- lost_update --exact --nocapture"
    );
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    assert!(
        env.contains(&format!("BRAID_REPLAY={}", file.display())),
        "{env}"
    );

    let fixed = r#"{"format":1,"test":"front_door::lost_update","outcome":"holds","runs":1,"coverage":"c"}"#;
    let o = braid(
        &fake_cargo(dir.path(), fixed),
        &["replay", file.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "no longer fails");

    let drifted = r#"{"format":1,"test":"front_door::lost_update","outcome":"drifted","message":"r.json drifted: step 3"}"#;
    let o = braid(
        &fake_cargo(dir.path(), drifted),
        &["replay", file.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("drifted"));
}
