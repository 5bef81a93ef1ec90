//! The command line end to end: explore writes a replay file that `replay` reproduces, byte for
//! byte; bad input gets one clear line and exit 2.

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

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit 2 with a single `error:` line mentioning `needle`, and no panic.
fn assert_bad_input(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(code(o), 2, "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
}

fn explore_bind_race(out: &Path, strategy: &str) -> serde_json::Value {
    let o = braid(&[
        "explore",
        "broker-bind-race",
        "--strategy",
        strategy,
        "--seed",
        "1",
        "--runs",
        "3000",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        code(&o),
        0,
        "a violation where one is expected exits 0: {}",
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

#[test]
fn explore_finds_the_bind_race_and_replay_reproduces_it_twice_identically() {
    let dir = tempfile::tempdir().unwrap();
    for strategy in ["pct", "random"] {
        let report = explore_bind_race(dir.path(), strategy);
        let s = &report[0];
        assert_eq!(s["scenario"], "broker-bind-race");
        assert_eq!(s["strategy"], strategy);
        assert_eq!(s["outcome"], "violation");
        assert_eq!(s["expected"], "violation:delivery-order");
        assert_eq!(s["matches_expectation"], true);
        for key in [
            "runs",
            "distinct_schedules",
            "elapsed_ms",
            "runs_per_sec",
            "seed",
        ] {
            assert!(s[key].is_number(), "{key} in {s}");
        }
        let v = &s["violations"][0];
        assert_eq!(v["invariant"], "delivery-order");
        for key in ["first_run", "steps", "preemptions"] {
            assert!(v[key].is_number(), "{key} in {v}");
        }
        let file = PathBuf::from(v["replay_file"].as_str().unwrap());
        assert!(file.exists());
        let first = braid(&["replay", file.to_str().unwrap()]);
        let second = braid(&["replay", file.to_str().unwrap()]);
        assert_eq!(code(&first), 0, "{}", stderr(&first));
        assert_eq!(first.stdout, second.stdout, "replay is byte-identical");
        let text = String::from_utf8_lossy(&first.stdout);
        assert!(text.contains("reproduced: delivery-order"), "{text}");
        assert!(text.contains("publisher:p1"), "{text}");
    }
}

#[test]
fn fixed_variant_holds_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let o = braid(&[
        "explore",
        "broker-bound-first",
        "--runs",
        "2000",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("outcome: holds; expected holds: as expected"),
        "{text}"
    );
}

#[test]
fn list_shows_scenarios_and_variants() {
    let o = braid(&["list"]);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("broker-unbound-behind-access"));
    assert!(text.contains("original, gate-lane, unbound-behind, bound-first"));
}

fn scratch_scenario(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn bad_scenarios_are_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_bad_input(
        &braid(&["explore", "no-such-scenario"]),
        "no scenario named 'no-such-scenario'",
    );
    let bad_toml = scratch_scenario(dir.path(), "bad-toml", "model = \"broker\"\nvariant = [");
    assert_bad_input(&braid(&["explore", &bad_toml]), "malformed scenario");
    let base = "model = \"broker\"\nexpected = \"holds\"\n";
    let unknown_variant = scratch_scenario(dir.path(), "v", &format!("{base}variant = \"nope\"\n"));
    assert_bad_input(
        &braid(&["explore", &unknown_variant]),
        "unknown variant 'nope'",
    );
    let unknown_key = scratch_scenario(
        dir.path(),
        "k",
        &format!("{base}variant = \"original\"\ncolour = \"red\"\n"),
    );
    assert_bad_input(&braid(&["explore", &unknown_key]), "unknown field `colour`");
    let unknown_param = scratch_scenario(
        dir.path(),
        "p",
        &format!("{base}variant = \"original\"\n[params]\npublisher = 2\n"),
    );
    assert_bad_input(
        &braid(&["explore", &unknown_param]),
        "unknown field `publisher`",
    );
    let bad_expected = scratch_scenario(
        dir.path(),
        "e",
        "model = \"broker\"\nvariant = \"original\"\nexpected = \"fine\"\n",
    );
    assert_bad_input(&braid(&["explore", &bad_expected]), "expected must be");
}

/// A replay file from a fresh exploration, as JSON, to corrupt in various ways.
fn good_replay(dir: &Path) -> (PathBuf, serde_json::Value) {
    let report = explore_bind_race(dir, "pct");
    let path = PathBuf::from(report[0]["violations"][0]["replay_file"].as_str().unwrap());
    let json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, json)
}

#[test]
fn bad_replay_files_are_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (path, json) = good_replay(dir.path());
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    assert_bad_input(
        &braid(&["replay", "/nonexistent/file.json"]),
        "cannot read replay file",
    );
    let corrupt = write("corrupt.json", "{ not json");
    assert_bad_input(&braid(&["replay", &corrupt]), "corrupt replay file");
    let text = std::fs::read_to_string(&path).unwrap();
    let truncated = write("truncated.json", &text[..text.len() / 2]);
    assert_bad_input(&braid(&["replay", &truncated]), "corrupt replay file");
    let mut newer = json.clone();
    newer["format"] = serde_json::json!(99);
    let newer = write("newer.json", &newer.to_string());
    assert_bad_input(&braid(&["replay", &newer]), "format 99 is newer");
    let mut unknown = json.clone();
    unknown["variant"] = serde_json::json!("nope");
    let unknown = write("unknown.json", &unknown.to_string());
    assert_bad_input(&braid(&["replay", &unknown]), "unknown variant 'nope'");
    // Drift: a decision that names a task the model does not have at that step.
    let mut drifted = json.clone();
    drifted["decisions"][1] = serde_json::json!("publisher:p9");
    let drifted = write("drifted.json", &drifted.to_string());
    assert_bad_input(&braid(&["replay", &drifted]), "diverged at step 1");
    // Drift: a different trace digest for the same violation.
    let mut digest = json;
    digest["digest"] = serde_json::json!("0123456789abcdef");
    let digest = write("digest.json", &digest.to_string());
    assert_bad_input(&braid(&["replay", &digest]), "trace digest");
}

#[test]
fn mutants_of_a_fixed_variant_are_caught_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let o = braid(&[
        "mutants",
        "broker-bound-first",
        "--runs",
        "2000",
        "--format",
        "json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &report[0];
    assert_eq!(m["guard"], "bind-flag");
    assert_eq!(m["caught"], true);
    assert_eq!(m["caught_by"], "broker-bound-first");
    let v = &m["violation"];
    assert_eq!(v["invariant"], "delivery-order");
    let replay = braid(&["replay", v["replay_file"].as_str().unwrap()]);
    assert_eq!(code(&replay), 0, "{}", stderr(&replay));
    assert!(String::from_utf8_lossy(&replay.stdout).contains("reproduced: delivery-order"));
}

#[test]
fn replay_renders_svg_html_and_mermaid() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = good_replay(dir.path());
    let svg = dir.path().join("race.svg");
    let html = dir.path().join("race.html");
    let o = braid(&[
        "replay",
        path.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--mermaid",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mermaid = String::from_utf8_lossy(&o.stdout);
    assert!(
        mermaid.starts_with("```mermaid\nsequenceDiagram\n"),
        "{mermaid}"
    );
    assert!(mermaid.contains("participant L1 as handler:c"), "{mermaid}");
    assert!(
        mermaid.contains("rect rgb(255, 228, 181)"),
        "a preemption is marked"
    );
    assert!(
        mermaid.contains("restart#35;1"),
        "# is escaped for Mermaid: {mermaid}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    assert!(svg.starts_with("<svg "));
    assert!(svg.trim_end().ends_with("</svg>"));
    for needle in [
        "publisher:p1",
        "queue.entries",
        "route p1#1 -&gt; QoS1 lane",
        "violation delivery-order",
        // The handler's phase, the messages' links, the violation's frames.
        ">register_session..bind</text>",
        r#"<path class="link""#,
        r#"<rect class="about""#,
    ] {
        assert!(svg.contains(needle), "{needle} in the SVG");
    }
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("<svg ") && html.contains("<pre>"));
}

/// A format 1 file (its digest from the older FNV-1a hasher) still replays: its violation is
/// checked, its digest is not, and `braid shrink` rewrites it in the current format.
#[test]
fn format_1_files_replay_and_shrink_upgrades_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json) = good_replay(dir.path());
    let mut old = json.clone();
    old["format"] = serde_json::json!(1);
    old["digest"] = serde_json::json!("0123456789abcdef");
    let path = dir.path().join("format-1.json");
    std::fs::write(&path, old.to_string()).unwrap();
    let path = path.to_str().unwrap();
    let replay = braid(&["replay", path]);
    assert_eq!(code(&replay), 0, "{}", stderr(&replay));
    assert!(String::from_utf8_lossy(&replay.stdout).contains("reproduced: delivery-order"));
    assert!(
        stderr(&replay).contains("format 1 file") && stderr(&replay).contains("braid shrink"),
        "{}",
        stderr(&replay)
    );
    let s = braid(&["shrink", path]);
    assert_eq!(code(&s), 0, "{}", stderr(&s));
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(after["format"], json["format"]);
    assert_ne!(after["digest"], old["digest"]);
    let replay = braid(&["replay", path]);
    assert_eq!(code(&replay), 0, "{}", stderr(&replay));
    assert!(!stderr(&replay).contains("format 1"), "{}", stderr(&replay));
}

#[test]
fn shrink_minimises_a_replay_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let o = braid(&[
        "explore",
        "broker-unbound-behind-access",
        "--no-shrink",
        "--format",
        "json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = &report[0]["violations"][0];
    let file = v["replay_file"].as_str().unwrap().to_string();
    let before: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(before.get("minimality").is_none());
    // A generous time cap: the run budget decides, so the result is the same on any machine.
    let s = braid(&["shrink", &file, "--shrink-time", "600"]);
    assert_eq!(code(&s), 0, "{}", stderr(&s));
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(after["preemptions"].as_u64() < before["preemptions"].as_u64());
    assert_eq!(after["shrunk_from"]["preemptions"], before["preemptions"]);
    // The race needs 3 preemptions: the search below the 1-minimal count gets there and
    // proves it.
    assert_eq!(after["preemptions"], 3);
    assert_eq!(after["minimality"], "minimum");
    assert!(String::from_utf8_lossy(&s.stdout).contains("3 preemptions, minimum"));
    assert_eq!(
        after["violation"]["invariant"],
        before["violation"]["invariant"]
    );
    let replay = braid(&["replay", &file]);
    assert_eq!(code(&replay), 0);
    assert!(String::from_utf8_lossy(&replay.stdout).contains("reproduced: delivery-order"));
    // `braid explore` shrinks the same found run to the same file, and reports the proof.
    let shrunk_dir = tempfile::tempdir().unwrap();
    let o = braid(&[
        "explore",
        "broker-unbound-behind-access",
        "--shrink-time",
        "600",
        "--out",
        shrunk_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("3 preemptions, the minimum (proved)"),
        "{text}"
    );
    // (Named by the shrunk schedule's digest, where the --no-shrink file is named by the
    // schedule as found.)
    let explored = std::fs::read_dir(shrunk_dir.path().join("broker-unbound-behind-access"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        std::fs::read_to_string(explored).unwrap(),
        std::fs::read_to_string(&file).unwrap()
    );
}

fn summary_key(r: &serde_json::Value) -> String {
    let violations: Vec<String> = r["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("{}@{}x{}", v["invariant"], v["first_run"], v["count"]))
        .collect();
    format!(
        "{} runs={} distinct={} outcome={} {:?}",
        r["scenario"], r["runs"], r["distinct_schedules"], r["outcome"], violations
    )
}

fn explore_json(args: &[&str]) -> serde_json::Value {
    let o = braid(args);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `braid explore <scenarios> <how>` on one job, on two jobs, and as shards 1/2 and 2/2 merged
/// by `braid merge`.
fn one_job_two_jobs_and_merged_shards(scenarios: &[&str], how: &[&str]) -> [serde_json::Value; 3] {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let run = |split: &[&str]| {
        let mut args = vec!["explore"];
        args.extend(scenarios);
        args.extend(how);
        args.extend(["--format", "json", "--out", out, "--no-shrink"]);
        args.extend(split);
        explore_json(&args)
    };
    let whole = run(&["--jobs", "1"]);
    let parallel = run(&["--jobs", "2"]);
    let mut parts = Vec::new();
    for shard in ["1/2", "2/2"] {
        let path = dir.path().join(format!("shard-{}.json", &shard[..1]));
        std::fs::write(&path, run(&["--shard", shard, "--jobs", "1"]).to_string()).unwrap();
        parts.push(path);
    }
    let merged = braid(&[
        "merge",
        parts[0].to_str().unwrap(),
        parts[1].to_str().unwrap(),
    ]);
    [
        whole,
        parallel,
        serde_json::from_slice(&merged.stdout).unwrap(),
    ]
}

#[test]
fn shards_merge_to_the_unsharded_result_and_jobs_change_nothing() {
    let scenarios = [
        "broker-bind-race",
        "relay-live-race-rejection-fence",
        "broker-bound-first",
    ];
    let [whole, parallel, merged] =
        one_job_two_jobs_and_merged_shards(&scenarios, &["--runs", "3000"]);
    for i in 0..scenarios.len() {
        assert_eq!(summary_key(&whole[i]), summary_key(&parallel[i]), "jobs");
        assert_eq!(summary_key(&whole[i]), summary_key(&merged[i]), "shards");
    }
}

/// What a DFS exploration establishes, whoever explored which subtree: exhaustive or not, the
/// violated invariants, and the end states reached.
fn proof_key(r: &serde_json::Value) -> String {
    let mut violations: Vec<String> = r["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["invariant"].to_string())
        .collect();
    violations.sort();
    format!(
        "{} exhaustive={} proved_bound={} outcome={} end_states={} {:?}",
        r["scenario"],
        r["exhaustive"],
        r["proved_bound"],
        r["outcome"],
        r["end_states"],
        violations
    )
}

#[test]
fn dfs_shards_and_jobs_prove_what_one_job_proves() {
    // Visited states (the default under a bound) on a fix and on a race; the split under partial
    // order is tested in sim/tests/dfs.rs.
    let scenarios = ["broker-unbound-behind", "broker-bind-race"];
    let [whole, parallel, merged] = one_job_two_jobs_and_merged_shards(
        &scenarios,
        &["--strategy", "dfs", "--preemption-bound", "2"],
    );
    for i in 0..scenarios.len() {
        // Within the bound: every schedule with at most 2 preemptions (the bound cut some).
        assert_eq!(whole[i]["proved_bound"], 2, "{}", scenarios[i]);
        assert_eq!(proof_key(&whole[i]), proof_key(&parallel[i]), "jobs");
        assert_eq!(proof_key(&whole[i]), proof_key(&merged[i]), "shards");
    }
}

/// Budgets that would check nothing, or cannot be held, are bad input (exit 2, no panic), never
/// a pass; so is a seed corpus that is not there.
#[test]
fn empty_and_impossible_budgets_are_bad_input() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["explore", "broker-bind-race", "--runs", "0"],
            "at least 1",
        ),
        (
            &["explore", "broker-bind-race", "--time", "1e300"],
            "at most",
        ),
        (
            &["explore", "broker-bind-race", "--time", "1e-300"],
            "rounds to nothing",
        ),
        (&["explore", "broker-bind-race", "--time=-1"], "more than 0"),
        (
            &["explore", "broker-bind-race", "--time", "nan"],
            "more than 0",
        ),
        (
            &["explore", "broker-bind-race", "--jobs", "0"],
            "at least 1",
        ),
        (&["ci", "--runs", "0"], "at least 1"),
        (
            &["ci", "--seeds", "no-such-corpus", "--runs", "1"],
            "not a directory",
        ),
    ];
    for (args, needle) in cases {
        let o = braid(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in {err}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    // An expectation no run can meet: an invariant the model does not check.
    let path = dir.path().join("typo.toml");
    let text =
        std::fs::read_to_string(Path::new(REPO).join("scenarios/broker-bind-race.toml")).unwrap();
    let text = text.replace(
        "expected = \"violation:delivery-order\"",
        "expected = \"violation:delivery-ordr\"",
    );
    assert!(text.contains("delivery-ordr"));
    std::fs::write(&path, text).unwrap();
    assert_bad_input(
        &braid(&["explore", path.to_str().unwrap()]),
        "no invariant 'delivery-ordr'",
    );
    // A scenario file named `...toml` would name its replay directory `..`, outside --out.
    let dots = dir.path().join("...toml");
    std::fs::copy(
        Path::new(REPO).join("scenarios/broker-bind-race.toml"),
        &dots,
    )
    .unwrap();
    assert_bad_input(
        &braid(&[
            "explore",
            dots.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ]),
        "scenario name '..'",
    );
    for (explore, needle) in [
        ("runs = 0", "runs must be at least 1"),
        ("time = 0", "time must be at least 1"),
    ] {
        let path = dir.path().join("zero.toml");
        let text = std::fs::read_to_string(Path::new(REPO).join("scenarios/broker-bind-race.toml"))
            .unwrap();
        let text = text.replace("[explore]", &format!("[explore]\n{explore}"));
        let text = match explore.starts_with("runs") {
            true => text.replace("runs = 20000\n", ""),
            false => text,
        };
        std::fs::write(&path, text).unwrap();
        let o = braid(&["explore", path.to_str().unwrap()]);
        assert_bad_input(&o, needle);
    }
}

/// A replay file whose violation reproduces under the same invariant but with another message
/// or at another step is drift, not a reproduction; one that does not reproduce exits 1.
#[test]
fn replay_compares_the_recorded_message_and_step() {
    let dir = tempfile::tempdir().unwrap();
    let report = explore_bind_race(dir.path(), "random");
    let file = report[0]["violations"][0]["replay_file"]
        .as_str()
        .unwrap()
        .to_string();
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for (field, value) in [
        ("message", serde_json::json!("something else happened")),
        ("step", serde_json::json!(0)),
    ] {
        let mut changed = recorded.clone();
        changed["violation"][field] = value;
        let path = dir.path().join(format!("changed-{field}.json"));
        std::fs::write(&path, changed.to_string()).unwrap();
        assert_bad_input(&braid(&["replay", path.to_str().unwrap()]), "drifted");
    }
    // `shrink` rejects a drifted file as `replay` does, and leaves it as it was.
    let mut drifted = recorded.clone();
    drifted["digest"] = serde_json::json!("0123456789abcdef");
    let path = dir.path().join("drifted.json");
    std::fs::write(&path, drifted.to_string()).unwrap();
    assert_bad_input(&braid(&["replay", path.to_str().unwrap()]), "drifted");
    assert_bad_input(&braid(&["shrink", path.to_str().unwrap()]), "drifted");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        drifted.to_string(),
        "untouched"
    );
    let mut other = recorded.clone();
    other["violation"]["invariant"] = serde_json::json!("no-duplicate");
    let path = dir.path().join("other-invariant.json");
    std::fs::write(&path, other.to_string()).unwrap();
    let o = braid(&["replay", path.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("NOT reproduced"));
}

/// An IO error is said once, with the path.
#[test]
fn an_io_error_is_said_once() {
    for args in [
        &["replay", "no-such-file.json"][..],
        &["explore", "--scenario-dir", "no-such-dir", "all"][..],
    ] {
        let o = braid(args);
        assert_bad_input(&o, "no-such-");
        assert_eq!(stderr(&o).matches("os error").count(), 1, "{}", stderr(&o));
    }
}
