//! `braid explore --test` and `braid replay` on a test's replay file drive `cargo test` with
//! the BRAID_* variables and read back each test's outcome. A stand-in `cargo` (a shell script
//! named by `CARGO`) records what it was asked and answers as a test would, so the plumbing is
//! tested without building a crate inside a test.

use std::path::Path;
use std::process::{Command, Output};

/// A fake cargo: `cargo metadata` names `dir/target`; `cargo test` logs its arguments and
/// environment, then writes `outcome` as a test's report.
fn fake_cargo(dir: &Path, outcome: &str) -> std::path::PathBuf {
    let script = dir.join("cargo");
    let body = format!(
        "#!/bin/sh\nif [ \"$1\" = metadata ]; then echo '{{\"target_directory\":\"{log}/target\"}}'; exit 0; fi\n\
         echo \"$@\" > {log}/args\nenv | grep -E '^(BRAID_|RUSTFLAGS|CARGO_TARGET_DIR)' | sort > {log}/env\ncat > \"$BRAID_REPORT/t.json\" <<'JSON'\n{outcome}\nJSON\n",
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

/// A fake cargo for `braid test`: `cargo metadata` names a target directory; `cargo test`
/// logs its arguments and environment and writes each of `outcomes` as a test's report.
fn fake_cargo_test(dir: &Path, target: &Path, outcomes: &[&str], exit: i32) -> std::path::PathBuf {
    let script = dir.join("cargo");
    let reports: String = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| format!("cat > \"$BRAID_REPORT/t{i}.json\" <<'JSON'\n{o}\nJSON\n"))
        .collect();
    let body = format!(
        "#!/bin/sh\nif [ \"$1\" = metadata ]; then echo '{{\"target_directory\":\"{target}\"}}'; exit 0; fi\n\
         echo \"$@\" > {log}/args\nenv | grep -E '^(BRAID_|RUSTFLAGS|CARGO_TARGET_DIR)' | sort > {log}/env\n{reports}exit {exit}\n",
        target = target.display(),
        log = dir.display()
    );
    std::fs::write(&script, body).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    script
}

#[test]
fn braid_test_builds_with_the_cfg_apart_and_prints_a_line_per_test() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let held = r#"{"format":1,"test":"pool::fixed","outcome":"holds","runs":29,"coverage":"every schedule, then 14 sampled runs"}"#;
    let failed = r#"{"format":1,"test":"pool::race","outcome":"failed","invariant":"panic","message":"taken twice","source":"explored","file":"/t/pool.race.json","rerun":"BRAID_REPLAY=/t/pool.race.json braid test -- -p user --test pool -- --exact race"}"#;
    let cargo = fake_cargo_test(dir.path(), &target, &[held, failed], 101);
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(["test", "--runs", "300", "--seed", "4", "--strategy", "dfs"])
        .args([
            "--preemption-bound",
            "2",
            "--",
            "-p",
            "user",
            "--",
            "--skip",
            "x",
        ])
        .env("CARGO", &cargo)
        .env("RUSTFLAGS", "-Cdebuginfo=1")
        .output()
        .expect("braid runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert_eq!(args.trim(), "test --no-fail-fast -p user -- --skip x");
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    for var in [
        "BRAID_RUNS=300",
        "BRAID_SEED=4",
        "BRAID_STRATEGY=dfs:2",
        "BRAID_REPORT=",
        "RUSTFLAGS=-Cdebuginfo=1 --cfg madsim",
        &format!("CARGO_TARGET_DIR={}", target.join("braid").display()),
    ] {
        assert!(env.contains(var), "{var} missing from\n{env}");
    }
    for line in [
        "pool::fixed: holds (29 runs: every schedule, then 14 sampled runs)",
        "pool::race: FAILED panic: taken twice",
        "  rerun: BRAID_REPLAY=/t/pool.race.json braid test -- -p user --test pool -- --exact race",
        "braid test: 2 braid tests: 1 held, 1 failed",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "{line:?} missing from\n{stdout}"
        );
    }

    // Every test held: exit 0. None ran: exit 1, saying how to set the crate up.
    let cargo = fake_cargo_test(dir.path(), &target, &[held], 0);
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("test")
        .env("CARGO", &cargo)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    assert!(env.contains("RUSTFLAGS=--cfg madsim\n"), "{env}");
    let cargo = fake_cargo_test(dir.path(), &target, &[], 0);
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("test")
        .env("CARGO", &cargo)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("no braid test ran"), "{stdout}");
    assert!(stdout.contains("braid-tokio"), "{stdout}");
}

/// A test's replay file drawn: the test process reports its failing run beside its outcome
/// (`<test>.trace.json`), and `braid replay` draws it as it draws a model's.
#[test]
fn replay_of_a_test_file_draws_the_run_the_test_reported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let replay = serde_json::json!({
        "format": 2, "scenario": "pool::deadlock", "model": "test", "variant": "",
        "params": {"package": "user", "crate": "pool", "file": "tests/pool.rs"},
        "max_steps": 10000, "found": {"strategy": "random", "seed": 1, "run": 0},
        "violation": {"invariant": "deadlock", "message": "no task can run: main waits on lock mutex#2: held by task", "step": 3},
        "steps": 3, "preemptions": 0, "digest": "0123456789abcdef", "decisions": []
    });
    std::fs::write(&file, replay.to_string()).unwrap();
    let outcome = r#"{"format":1,"test":"pool::deadlock","outcome":"failed","invariant":"deadlock","message":"no task can run","source":"replay"}"#;
    let trace = serde_json::json!({
        "lines": [
            {"kind": "step", "step": 0, "task": "main", "op": "lock mutex#1", "object": "mutex#1", "preempted": false},
            {"kind": "step", "step": 1, "task": "task", "op": "lock mutex#2", "object": "mutex#2", "preempted": true},
            {"kind": "step", "step": 2, "task": "main", "op": "lock mutex#2", "object": "mutex#2", "preempted": false},
            {"kind": "end", "step": 3, "text": "deadlock: no task can run"}
        ],
        "wait_for": [
            {"task": "main", "op": "lock mutex#2", "object": "mutex#2", "state": "held by task", "holders": ["task"], "idle": false},
            {"task": "task", "op": "lock mutex#1", "object": "mutex#1", "state": "held by main", "holders": ["main"], "idle": false}
        ]
    });
    let cargo = fake_cargo(dir.path(), outcome);
    // The fake test also leaves its run beside its outcome, as the library does.
    let script = std::fs::read_to_string(&cargo).unwrap().replace(
        "cat > \"$BRAID_REPORT/t.json\"",
        &format!("echo '{trace}' > \"$BRAID_REPORT/t.trace.json\"\ncat > \"$BRAID_REPORT/t.json\""),
    );
    std::fs::write(&cargo, script).unwrap();
    let svg = dir.path().join("pics/run.svg");
    let o = braid(
        &cargo,
        &[
            "replay",
            file.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
            "--mermaid",
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("wrote") && stderr.contains("made"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the SVG parses");
    let all: String = doc.descendants().filter_map(|n| n.text()).collect();
    for needle in ["lock mutex#2", "main", "task", "held by"] {
        assert!(all.contains(needle), "{needle} not in the picture");
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    let mermaid = stdout.split("```mermaid").nth(1).expect("a Mermaid block");
    assert!(
        mermaid.contains("sequenceDiagram") && mermaid.contains("```"),
        "{stdout}"
    );
    // Balanced: every `rect` (a preemption, the wait-for) closes with an `end`.
    let opens = mermaid
        .lines()
        .filter(|l| l.trim_start().starts_with("rect "))
        .count();
    let ends = mermaid.lines().filter(|l| l.trim() == "end").count();
    assert_eq!(opens, ends, "{mermaid}");
    // Mermaid writes `#` as `#35;`.
    assert!(
        mermaid.contains("waits: lock mutex#35;2: held by task"),
        "{mermaid}"
    );
    // And the cargo it ran: the cfg, in a target of its own.
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    assert!(env.contains("--cfg madsim"), "{env}");
    assert!(
        env.contains("CARGO_TARGET_DIR=") && env.contains("target/braid"),
        "{env}"
    );
}

#[test]
fn braid_test_passes_its_shard_and_prints_the_shard_summaries_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let held = r#"{"format":1,"test":"mycrate::it_holds","outcome":"holds","runs":3,"coverage":"shard 2 of 4: 3 runs"}"#;
    let cargo = fake_cargo(dir.path(), held);
    // The test's shard summary beside its outcome, as `braid::check(..).shard(2, 4)` writes it.
    let summary = r#"[{"format":1,"scenario":"mycrate::it_holds","model":"test","variant":"","strategy":"random","seed":1,"shard":{"index":2,"count":4,"budget_runs":10},"runs":3,"distinct_schedules":3,"elapsed_ms":1.0,"runs_per_sec":3000.0,"max_steps_seen":4,"grain":"access","exhaustive":false,"pruned":0,"end_states":1,"determinism_checked":0,"outcome":"holds","expected":"holds","matches_expectation":true,"violations":[]}]"#;
    let script = std::fs::read_to_string(&cargo).unwrap();
    let script = script.replace(
        "cat > \"$BRAID_REPORT/t.json\"",
        &format!(
            "echo '{summary}' > \"$BRAID_REPORT/t.shard.json\"\ncat > \"$BRAID_REPORT/t.json\""
        ),
    );
    std::fs::write(&cargo, script).unwrap();
    let o = braid(&cargo, &["test", "--shard", "2/4", "--format", "json"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    assert!(env.contains("BRAID_SHARD=2/4"), "{env}");
    let printed: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(printed[0]["shard"]["index"], 2);
    assert_eq!(printed[0]["scenario"], "mycrate::it_holds");
    // The table goes to stderr with --format json.
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 held"));
    let bad = braid(&cargo, &["test", "--shard", "5/4"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("5/4"));
}
