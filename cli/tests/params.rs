//! Model parameters are user input, in scenario and replay files alike: a size beyond its range
//! is one clear line naming the parameter and exit 2, never an abort or minutes of spawning; every
//! committed scenario stays inside the ranges.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::path::Path;
use std::process::{Command, Output};

fn braid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .current_dir(REPO)
        .output()
        .expect("braid runs")
}

fn assert_bad_input(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
}

fn scenario(dir: &Path, model: &str, variant: &str, params: &str) -> String {
    let path = dir.join(format!("{model}-big.toml"));
    let text = format!(
        "model = \"{model}\"\nvariant = \"{variant}\"\nexpected = \"holds\"\n[params]\n{params}\n"
    );
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn sizes_beyond_their_range_in_a_scenario_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    for (model, variant, params, needle) in [
        (
            "broker",
            "original",
            "lane_capacity = 1000000000000",
            "lane_capacity must be at most 10000, not 1000000000000",
        ),
        (
            "broker",
            "original",
            "window = 100000000",
            "window must be at most 10000",
        ),
        (
            "broker",
            "original",
            "publishers = 100000",
            "publishers must be at most 10000",
        ),
        (
            "broker",
            "original",
            "messages = 0",
            "messages must be at least 1, not 0",
        ),
        (
            "broker",
            "original",
            "publishers = 10000\nmessages = 10",
            "MQTT packet ids are 16 bits",
        ),
        (
            "relay",
            "generation-fence",
            "limit = 1000000000000",
            "limit must be at most 10000",
        ),
        (
            "relay",
            "generation-fence",
            "outbound = 1000000000000",
            "outbound must be at most",
        ),
        (
            "relay",
            "generation-fence",
            "pubsub_queue = 1000000000000",
            "pubsub_queue must be at most",
        ),
        (
            "pubsub",
            "coalesced-reconcile",
            "queue = 1000000000000",
            "queue must be at most 16",
        ),
    ] {
        let path = scenario(dir.path(), model, variant, params);
        let o = braid(&["explore", &path, "--runs", "1", "--jobs", "1"]);
        assert_bad_input(&o, needle);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("bad parameters for model"),
            "{params}"
        );
    }
}

#[test]
fn sizes_beyond_their_range_in_a_replay_file_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let seed = Path::new(REPO).join("seeds/broker-bind-race/delivery-order-55690cf6.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(seed).unwrap()).unwrap();
    json["params"]["lane_capacity"] = serde_json::json!(1_000_000_000_000u64);
    let path = dir.path().join("huge.json");
    std::fs::write(&path, json.to_string()).unwrap();
    let path = path.to_str().unwrap();
    assert_bad_input(
        &braid(&["replay", path]),
        "lane_capacity must be at most 10000",
    );
    assert_bad_input(
        &braid(&["shrink", path]),
        "lane_capacity must be at most 10000",
    );
}

#[test]
fn an_absurd_pct_depth_is_bad_input() {
    let explore: &[&str] = &[
        "explore",
        "broker-bind-race",
        "--strategy",
        "pct",
        "--depth",
        "100000000",
    ];
    let ci: &[&str] = &[
        "ci",
        "--runs",
        "1",
        "--strategy",
        "pct",
        "--depth",
        "100000000",
    ];
    for args in [explore, ci] {
        assert_bad_input(&braid(args), "PCT depth must be at most 1000");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.toml");
    std::fs::write(
        &path,
        "model = \"broker\"\nvariant = \"original\"\nexpected = \"holds\"\n\
         [explore]\nstrategy = \"pct\"\ndepth = 100000000\n",
    )
    .unwrap();
    assert_bad_input(
        &braid(&["explore", path.to_str().unwrap()]),
        "PCT depth must be at most 1000",
    );
}

#[test]
fn every_committed_scenario_is_within_the_ranges() {
    let dir = Path::new(REPO).join("scenarios");
    let scenarios = sim::scenario::Scenario::load_dir(&dir).expect("scenarios load");
    assert!(scenarios.len() > 40);
    for s in &scenarios {
        if let Err(e) = models::registry::build(&s.model, &s.variant, &s.params) {
            panic!("{}: {e}", s.name);
        }
    }
}
