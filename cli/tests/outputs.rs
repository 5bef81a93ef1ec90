//! Output files (`--svg`, `--html`, `--junit`, replay files) go only to a regular file or a new
//! path: a directory, socket or symlink at the path is refused (exit 2) and left as it was, no
//! temporary file is left behind, and stale temporary files of braid's naming are cleaned up.

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

const SEED: &str = "seeds/broker-bind-race/delivery-order-55690cf6.json";

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn assert_refused(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "expected '{needle}' in {err}");
    assert!(o.stdout.is_empty(), "refused before the replay ran");
}

#[test]
fn a_directory_is_refused_and_no_temp_file_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("picture");
    std::fs::create_dir(&target).unwrap();
    for flag in ["--svg", "--html"] {
        let o = braid(&["replay", SEED, flag, target.to_str().unwrap()]);
        assert_refused(&o, "is a directory");
    }
    assert!(target.is_dir());
    assert_eq!(names(dir.path()), ["picture"]);
    assert!(names(&target).is_empty());
}

#[cfg(unix)]
#[test]
fn a_socket_or_a_symlink_is_never_replaced() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let o = braid(&["replay", SEED, "--html", socket.to_str().unwrap()]);
    assert_refused(&o, "is not a regular file");
    assert!(std::fs::symlink_metadata(&socket)
        .unwrap()
        .file_type()
        .is_socket());
    let real = dir.path().join("real.svg");
    std::fs::write(&real, "keep").unwrap();
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = braid(&["replay", SEED, "--svg", link.to_str().unwrap()]);
    assert_refused(&o, "is a symbolic link");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
    assert_eq!(names(dir.path()), ["link.svg", "real.svg", "socket"]);
}

#[test]
fn ci_refuses_a_junit_path_that_is_a_directory_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let o = braid(&["ci", "--runs", "1", "--junit", dir.path().to_str().unwrap()]);
    assert_refused(&o, "is a directory");
}

/// A process id no process has (pid_max is at most 2^22 on Linux).
const DEAD_PID: u32 = 4_194_305;

#[test]
fn a_regular_file_is_replaced_and_stale_temp_files_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let stale = format!(".braid-{DEAD_PID}-aB3xYz.tmp");
    let live = format!(".braid-{}-aB3xYz.tmp", std::process::id());
    for name in [&stale, &live, ".other-1-abc.tmp", "picture.svg"] {
        std::fs::write(dir.path().join(name), "old").unwrap();
    }
    let svg = dir.path().join("picture.svg");
    let html = dir.path().join("new.html");
    let o = braid(&[
        "replay",
        SEED,
        "--svg",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    let mut expected = vec![
        live.clone(),
        ".other-1-abc.tmp".to_string(),
        "new.html".to_string(),
        "picture.svg".to_string(),
    ];
    expected.sort();
    assert_eq!(
        names(dir.path()),
        expected,
        "only the dead process's temp file went"
    );
}

#[test]
fn explore_writes_replay_files_without_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let o = braid(&[
        "explore",
        "broker-bind-race",
        "--runs",
        "200",
        "--jobs",
        "1",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let files = names(&dir.path().join("broker-bind-race"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("delivery-order-") && files[0].ends_with(".json"));
}
