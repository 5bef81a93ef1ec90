//! Ctrl-C: the first stops an exploration between runs, writes what it found and prints the
//! summary (exit 130); the second exits at once. The engine's side is `Explorer::cancel_on`.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sim::explore::Explorer;
use sim::strategy::{Reduction, StrategyKind};

fn model(name: &str) -> Box<dyn sim::Model> {
    let dir = Path::new(REPO).join("scenarios");
    let s = sim::scenario::Scenario::find(&dir, name).unwrap();
    models::registry::build(&s.model, &s.variant, &s.params).unwrap()
}

#[test]
fn a_cancelled_exploration_stops_before_its_next_run_and_proves_nothing() {
    let model = model("broker-bound-first");
    let dfs = StrategyKind::Dfs {
        preemption_bound: None,
        reduction: Reduction::VisitedStates,
    };
    for (strategy, jobs, runs) in [
        (StrategyKind::Random, 1, Some(1_000_000)),
        (StrategyKind::Pct { depth: 3 }, 2, Some(1_000_000)),
        (dfs, 1, None),
        (dfs, 2, None),
        // A budget makes an unbounded DFS deepen: it stops between levels too.
        (dfs, 1, Some(1_000_000)),
    ] {
        let mut explorer = Explorer::new(model.as_ref())
            .strategy(strategy)
            .jobs(jobs)
            .cancel_on(Arc::new(AtomicBool::new(true)));
        if let Some(r) = runs {
            explorer = explorer.runs(r);
        }
        let summary = explorer.run().unwrap();
        assert_eq!(summary.runs, 0, "{strategy:?} x{jobs}");
        assert!(!summary.exhaustive, "{strategy:?} x{jobs}");
        assert_eq!(summary.proved_bound, None, "{strategy:?} x{jobs}");
    }
    // Not cancelled: the same search proves the scenario.
    let summary = Explorer::new(model.as_ref())
        .strategy(dfs)
        .cancel_on(Arc::new(AtomicBool::new(false)))
        .run()
        .unwrap();
    assert!(summary.exhaustive && summary.runs > 0);
}

fn spawn_explore(out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .args([
            "explore",
            "broker-bind-race",
            "broker-bound-first",
            "--strategy",
            "random",
            "--runs",
            "1000000000",
            "--jobs",
            "2",
            "--format",
            "json",
            "--out",
        ])
        .arg(out)
        .current_dir(REPO)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("braid runs")
}

fn sigint(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn the_first_ctrl_c_writes_what_was_found_and_prints_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_explore(dir.path());
    std::thread::sleep(Duration::from_millis(1500));
    sigint(&child);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON summary");
    let reports = report.as_array().unwrap();
    assert_eq!(reports.len(), 1, "the second scenario is not started");
    let r = &reports[0];
    assert_eq!(r["interrupted"], true);
    assert!(r["runs"].as_u64().unwrap() > 0);
    let file = r["violations"][0]["replay_file"]
        .as_str()
        .expect("a violation");
    let replay = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(["replay", file])
        .current_dir(REPO)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(0), "the file written reproduces");
}

#[cfg(unix)]
#[test]
fn the_second_ctrl_c_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_explore(dir.path());
    std::thread::sleep(Duration::from_millis(1000));
    sigint(&child);
    sigint(&child);
    let start = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// `braid ci` on one scenario with a budget it would never finish (a violation it expects is
/// found early, and the exploration goes on), and an empty seed corpus.
fn spawn_ci(dir: &Path) -> Child {
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::create_dir_all(dir.join("seeds")).unwrap();
    let here = Path::new(REPO).join("scenarios");
    std::fs::copy(
        here.join("broker-bind-race.toml"),
        scenarios.join("broker-bind-race.toml"),
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("ci")
        .arg("--scenario-dir")
        .arg(&scenarios)
        .arg("--seeds")
        .arg(dir.join("seeds"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--junit")
        .arg(dir.join("junit.xml"))
        .args([
            "--strategy",
            "random",
            "--runs",
            "1000000000",
            "--format",
            "json",
        ])
        .current_dir(REPO)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("braid runs")
}

#[cfg(unix)]
#[test]
fn ci_stops_at_the_first_ctrl_c_writes_its_outputs_and_prints_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_ci(dir.path());
    std::thread::sleep(Duration::from_millis(2000));
    sigint(&child);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON summary");
    assert_eq!(report["interrupted"], true, "{report}");
    let cases = report["cases"].as_array().unwrap();
    // The scenario under way, and nothing after it: no mutant, no determinism case, no proof.
    assert_eq!(cases.len(), 1, "{report}");
    assert_eq!(cases[0]["kind"], "scenario");
    let message = cases[0]["message"].as_str().unwrap();
    assert!(message.starts_with("interrupted after "), "{message}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).expect("JUnit written");
    assert!(junit.contains("broker-bind-race"), "{junit}");
}

#[cfg(unix)]
#[test]
fn ci_exits_at_once_on_the_second_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_ci(dir.path());
    std::thread::sleep(Duration::from_millis(1500));
    sigint(&child);
    sigint(&child);
    let start = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[cfg(unix)]
#[test]
fn mutants_stop_at_the_first_ctrl_c_and_print_what_they_tried() {
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args([
            "mutants",
            "broker-bound-first",
            "--strategy",
            "random",
            "--runs",
            "1000000000",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .current_dir(REPO)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("braid runs");
    std::thread::sleep(Duration::from_millis(2000));
    sigint(&child);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    let reports: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON summary");
    let reports = reports.as_array().unwrap();
    assert_eq!(reports.len(), 1, "the next mutants are not started");
    let r = &reports[0];
    // Its exploration stopped: what it found is reported, as caught, or it is marked stopped.
    assert!(r["caught"] == true || r["interrupted"] == true, "{r}");
}
