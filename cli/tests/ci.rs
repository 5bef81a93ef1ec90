//! `braid ci`, the pull-request gate, end to end.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn braid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("braid runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

#[test]
fn the_gate_passes_on_main_and_its_junit_has_one_case_per_seed_scenario_mutant_and_proof() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("braid.xml");
    let out = dir.path().join("ci");
    let o = braid(&[
        "ci",
        "--runs",
        "4000",
        "--junit",
        junit.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        code(&o),
        0,
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    common::junit10::validate(&xml);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed JUnit XML");
    let count = |suite: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .filter(|n| n.attribute("classname") == Some(&format!("braid.{suite}")))
            .count()
    };
    let files = |dir: &str, ext: &str| -> usize {
        fn walk(p: &Path, ext: &str) -> usize {
            std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .map(|p| {
                    if p.is_dir() {
                        walk(&p, ext)
                    } else {
                        usize::from(p.extension().is_some_and(|x| x == ext))
                    }
                })
                .sum()
        }
        walk(&Path::new(REPO).join(dir), ext)
    };
    assert_eq!(count("seed"), files("seeds", "json"));
    assert_eq!(count("scenario"), files("scenarios", "toml"));
    assert!(count("mutant") >= 10, "{xml}");
    assert_eq!(count("determinism"), 1);
    let fixed = std::fs::read_dir(Path::new(REPO).join("scenarios"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter(|toml| toml.lines().any(|l| l == r#"expected = "holds""#))
        // A proof that takes minutes is left to its documented command.
        .filter(|toml| !toml.lines().any(|l| l == "ci_proof = false"))
        .count();
    assert!(fixed > 0);
    assert_eq!(
        count("proof"),
        fixed,
        "one proof per fixed scenario ci proves"
    );
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count(),
        0
    );
}

#[test]
fn a_regressed_guard_fails_the_gate_with_the_scenario_invariant_and_a_replay_command() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    // A scratch copy of a fixed scenario whose variant lost its guard: the shipped fix at
    // access grain, still expected to hold.
    let fixed =
        std::fs::read_to_string(Path::new(REPO).join("scenarios/broker-bound-first-access.toml"))
            .unwrap();
    let regressed = fixed.replace("variant = \"bound-first\"", "variant = \"unbound-behind\"");
    assert_ne!(fixed, regressed);
    std::fs::write(scenarios.join("broker-guard-regressed.toml"), regressed).unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    let out = dir.path().join("ci");
    let o = braid(&[
        "ci",
        "--scenario-dir",
        scenarios.to_str().unwrap(),
        "--seeds",
        seeds.to_str().unwrap(),
        "--strategy",
        "random",
        "--runs",
        "20000",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 1, "{stdout}");
    assert!(
        stdout.contains("FAIL scenario     broker-guard-regressed"),
        "{stdout}"
    );
    assert!(stdout.contains("violated delivery-order"), "{stdout}");
    assert!(stdout.contains("```mermaid"), "{stdout}");
    let command = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("reproduce: braid replay "))
        .expect("a replay command");
    let replay = braid(&["replay", command.trim()]);
    assert_eq!(code(&replay), 0, "the recorded violation reproduces");
    assert!(String::from_utf8_lossy(&replay.stdout).contains("reproduced: delivery-order"));
}

#[test]
fn a_corrupted_seed_file_is_bad_input_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir_all(seeds.join("broker-bind-race")).unwrap();
    let bad = seeds.join("broker-bind-race/delivery-order-00000000.json");
    std::fs::write(&bad, "{\"format\": 1, \"scenario\": ").unwrap();
    let o = braid(&["ci", "--seeds", seeds.to_str().unwrap(), "--runs", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("delivery-order-00000000.json"), "{err}");
    assert!(err.contains("corrupt replay file"), "{err}");
}
