//! Replay files are read strictly: format 0, a key braid does not write (in the file, its
//! violation or a decision), and a key named twice are corrupt files, exit 2 in one line.

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

fn seed_text() -> String {
    let seed = Path::new(REPO).join("seeds/broker-bind-race/delivery-order-55690cf6.json");
    std::fs::read_to_string(seed).unwrap()
}

fn assert_refused(dir: &Path, name: &str, text: &str, needle: &str) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    for command in ["replay", "shrink"] {
        let o = braid(&[command, path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{command} {name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains("corrupt replay file"), "{name}: {err}");
        assert!(err.contains(needle), "{name}: expected '{needle}' in {err}");
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "{name} untouched"
    );
}

/// Replaces the one occurrence of `from` in `text`.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from}");
    text.replacen(from, to, 1)
}

#[test]
fn the_committed_seed_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.json");
    std::fs::write(&path, seed_text()).unwrap();
    let o = braid(&["replay", path.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn format_0_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = edit(&seed_text(), "\"format\": 2", "\"format\": 0");
    assert_refused(
        dir.path(),
        "zero.json",
        &text,
        "format 0 is not a replay file format",
    );
}

#[test]
fn unknown_keys_in_the_violation_or_a_decision_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = seed_text();
    let violation = edit(
        &text,
        "\"step\": 26",
        "\"step\": 26,\n    \"colour\": \"red\"",
    );
    assert_refused(
        dir.path(),
        "violation.json",
        &violation,
        "unknown field `colour`",
    );
    let decision = edit(&text, "\"choose\": 0", "\"choose\": 0, \"weight\": 3");
    assert_refused(
        dir.path(),
        "decision.json",
        &decision,
        "unknown field `weight`",
    );
    let empty = edit(&text, "{\n      \"choose\": 0\n    }", "{}");
    assert_refused(dir.path(), "empty.json", &empty, "missing field `choose`");
}

#[test]
fn a_key_named_twice_is_refused_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let text = seed_text();
    for (name, from, to) in [
        (
            "top.json",
            "\"format\": 2,",
            "\"format\": 2,\n  \"format\": 2,",
        ),
        (
            "params.json",
            "\"window\": 1",
            "\"window\": 1,\n    \"window\": 2",
        ),
        (
            "violation.json",
            "\"step\": 26",
            "\"step\": 26,\n    \"step\": 27",
        ),
        (
            "decision.json",
            "\"choose\": 0",
            "\"choose\": 0, \"choose\": 1",
        ),
    ] {
        assert_refused(dir.path(), name, &edit(&text, from, to), "duplicate");
    }
}
