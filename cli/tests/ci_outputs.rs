//! What CI consumes from `braid ci`: with `--format json`, stdout is one JSON document even when
//! a new violation is found (the human text goes to stderr); the JUnit XML has junit-10's shape
//! and a failure carries its message, type, replay command and Mermaid diagram; `--summary`
//! writes the same as Markdown for a job summary.

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

#[test]
fn a_new_violation_keeps_json_pure_and_reaches_junit_and_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    // A fixed scenario whose variant lost its guard: the shipped fix at access grain, still
    // expected to hold.
    let fixed =
        std::fs::read_to_string(Path::new(REPO).join("scenarios/broker-bound-first-access.toml"))
            .unwrap();
    let regressed = fixed.replace("variant = \"bound-first\"", "variant = \"unbound-behind\"");
    assert_ne!(fixed, regressed);
    std::fs::write(scenarios.join("broker-guard-regressed.toml"), regressed).unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    let (junit, summary) = (dir.path().join("braid.xml"), dir.path().join("summary.md"));
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
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
        "--summary",
        summary.to_str().unwrap(),
        "--out",
        dir.path().join("ci").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let report: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    assert_eq!(report["format"], 1);
    assert!(report["failed"].as_u64().unwrap() >= 1);
    let case = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "scenario")
        .unwrap();
    assert_eq!(case["ok"], false);
    let v = &case["new_violation"];
    assert_eq!(v["invariant"], "delivery-order");
    assert!(v["mermaid"].as_str().unwrap().contains("sequenceDiagram"));
    let replay = v["replay"].as_str().unwrap();
    assert!(Path::new(replay).is_file());
    // The human text went to stderr.
    assert!(err.contains("FAIL scenario"), "{err}");
    assert!(
        err.contains("NEW VIOLATION in broker-guard-regressed"),
        "{err}"
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(common::junit10::validate(&xml) >= 2);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failure = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("failure")
                && n.parent().unwrap().attribute("classname") == Some("braid.scenario")
        })
        .expect("the scenario's failure");
    assert_eq!(failure.attribute("type"), Some("expectation-not-met"));
    assert!(failure
        .attribute("message")
        .unwrap()
        .contains("violated delivery-order"));
    let body = failure.text().unwrap();
    assert!(body.contains(&format!("braid replay {replay}")), "{body}");
    assert!(body.contains("```mermaid\nsequenceDiagram"), "{body}");

    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("## braid ci: "), "{md}");
    assert!(md.contains("### New violation in broker-guard-regressed: delivery-order"));
    assert!(md.contains(&format!("`braid replay {replay}`")));
    assert!(md.contains("```mermaid\nsequenceDiagram"));
}
