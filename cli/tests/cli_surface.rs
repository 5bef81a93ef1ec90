//! The command line as a user meets it: `list` survives a malformed scenario and aligns long
//! names, `list seeds`, help for `--format`, one `--seed` for explore and ci, shell completions,
//! and colour that honours NO_COLOR.

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::path::Path;
use std::process::{Command, Output};

fn braid_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_braid"));
    c.args(args)
        .current_dir(REPO)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("braid runs")
}

fn braid(args: &[&str]) -> Output {
    braid_env(args, &[])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn repo(path: &str) -> String {
    std::fs::read_to_string(Path::new(REPO).join(path)).unwrap()
}

#[test]
fn list_reports_a_malformed_scenario_lists_the_rest_aligned_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = repo("scenarios/broker-bind-race.toml");
    let long = "a-scenario-with-a-name-much-longer-than-any-committed-one-so-far";
    std::fs::write(dir.path().join("short.toml"), &good).unwrap();
    std::fs::write(dir.path().join(format!("{long}.toml")), &good).unwrap();
    std::fs::write(dir.path().join("broken.toml"), "model = [").unwrap();
    let o = braid(&["list", "--scenario-dir", dir.path().to_str().unwrap()]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("broken.toml: malformed scenario"), "{err}");
    assert!(err.contains("1 malformed scenario"), "{err}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("expect violation"))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    let column = |row: &str| row.find("broker/original").unwrap();
    assert_eq!(column(rows[0]), column(rows[1]), "{out}");
    assert!(out.contains("models:"), "{out}");
}

#[test]
fn list_seeds_lists_the_corpus_and_reports_a_corrupt_file() {
    let o = braid(&["list", "seeds"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        out.contains("seeds/broker-bind-race/delivery-order-55690cf6.json"),
        "{out}"
    );
    assert!(out.contains("broker-bind-race delivery-order: 26 steps, 1 preemption"));
    let dir = tempfile::tempdir().unwrap();
    let seed = repo("seeds/broker-bind-race/delivery-order-55690cf6.json");
    std::fs::write(dir.path().join("good.json"), seed).unwrap();
    std::fs::write(dir.path().join("bad.json"), "{").unwrap();
    let o = braid(&["list", "seeds", "--seeds", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("good.json"));
    assert!(text(&o.stderr).contains("bad.json: corrupt replay file"));
}

#[test]
fn every_format_option_has_help() {
    for command in ["explore", "replay", "mutants", "ci", "merge"] {
        let o = braid(&[command, "--help"]);
        let help = text(&o.stdout);
        let at = help.find("--format <FORMAT>").expect("a --format option");
        assert!(
            help[at..].lines().take(3).any(|l| l.contains("Output:")),
            "{command}: {help}"
        );
    }
}

#[test]
fn seed_takes_the_same_values_in_explore_and_ci() {
    let dir = tempfile::tempdir().unwrap();
    let o = braid(&[
        "explore",
        "broker-bind-race",
        "--seed",
        "random",
        "--runs",
        "100",
        "--format",
        "json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let drawn: u64 = err
        .split("drew seed ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("the drawn seed on stderr");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report[0]["seed"], drawn);
    let explore: &[&str] = &["explore", "broker-bind-race", "--seed", "abc"];
    let ci: &[&str] = &["ci", "--seed", "abc"];
    for command in [explore, ci] {
        let o = braid(command);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            text(&o.stderr).contains("'abc' is not a seed: a number, or `random`"),
            "{command:?}: {}",
            text(&o.stderr)
        );
    }
}

#[test]
fn completions_for_bash_and_zsh() {
    let bash = braid(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    let script = text(&bash.stdout);
    assert!(
        script.contains("_braid()") && script.contains("explore"),
        "{script}"
    );
    let zsh = braid(&["completions", "zsh"]);
    assert!(text(&zsh.stdout).starts_with("#compdef braid"));
}

#[test]
fn verdicts_are_coloured_unless_no_color_is_set() {
    let seed = "seeds/broker-bind-race/delivery-order-55690cf6.json";
    let piped = text(&braid(&["replay", seed]).stdout);
    assert!(!piped.contains('\x1b'), "no colour into a pipe");
    let forced = text(&braid_env(&["replay", seed], &[("CLICOLOR_FORCE", "1")]).stdout);
    assert!(forced.contains("\x1b[32mreproduced\x1b[0m"), "{forced}");
    let no_color = braid_env(
        &["replay", seed],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
    );
    assert!(!text(&no_color.stdout).contains('\x1b'));
}

#[test]
fn an_unknown_scenario_suggests_the_nearest_and_several_end_with_a_summary() {
    let o = braid(&["explore", "broker-bind-rac"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("did you mean `broker-bind-race`?"),
        "{}",
        text(&o.stderr)
    );
    let o = braid(&["explore", "nothing-like-any-name"]);
    assert!(!text(&o.stderr).contains("did you mean"));

    let o = braid(&[
        "explore",
        "broker-bind-race",
        "broker-bound-first",
        "--runs",
        "300",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().last(),
        Some("explored 2 scenarios: 2 as expected"),
        "{out}"
    );
}

#[test]
fn scenario_commands_run_from_anywhere() {
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("list")
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("broker-bind-race"));
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(["list", "seeds"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("delivery-order-55690cf6.json"));
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(["list", "--scenario-dir", "missing"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("missing"), "{}", text(&o.stderr));
}
