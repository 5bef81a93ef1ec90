//! A coarse-grain scenario that holds owes a grain check: what its access-grain runs find must
//! be what the scenario declares its grain hides, or the "holds" does not stand (exit 1).

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::process::Command;

fn explore(dir: &std::path::Path, scenario: &str) -> (i32, String) {
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args([
            "--scenario-dir",
            dir.to_str().unwrap(),
            "explore",
            scenario,
            "--jobs",
            "1",
            "--runs",
            "2000",
        ])
        .args(["--out", out.path().to_str().unwrap()])
        .output()
        .expect("braid runs");
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn a_coarse_grain_holds_only_with_what_it_hides_declared() {
    let dir = tempfile::tempdir().unwrap();
    let shipped =
        std::fs::read_to_string(format!("{REPO}/scenarios/broker-unbound-behind.toml")).unwrap();
    assert!(shipped.contains("hides = \"delivery-order\""));
    std::fs::write(dir.path().join("declared.toml"), &shipped).unwrap();
    let undeclared: String = shipped
        .lines()
        .filter(|l| !l.starts_with("hides"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.path().join("undeclared.toml"), undeclared).unwrap();

    let (code, stdout) = explore(dir.path(), "declared");
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("await grain")
            && stdout.contains("grain check: 2000 runs at access grain found delivery-order"),
        "{stdout}"
    );

    let (code, stdout) = explore(dir.path(), "undeclared");
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("NOT DECLARED") && stdout.contains("NOT AS EXPECTED"),
        "{stdout}"
    );
}
