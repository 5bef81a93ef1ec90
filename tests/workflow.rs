//! The CI workflow and the toolchain pin: what the issue asked of them, checked as text.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn the_workflow_locks_reports_summarises_and_limits_itself() {
    let yml = read(".github/workflows/braid.yml");
    for needed in [
        "\npermissions:\n",
        "\nconcurrency:\n",
        "cancel-in-progress: true",
        "dorny/test-reporter",
        "reporter: java-junit",
        "--summary target/braid-summary-",
        ">> \"$GITHUB_STEP_SUMMARY\"",
    ] {
        assert!(yml.contains(needed), "the workflow lacks {needed:?}");
    }
    let cargo: Vec<&str> = yml
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- run: cargo "))
        .filter(|l| !l.starts_with("fmt"))
        .collect();
    assert!(cargo.len() >= 3, "{cargo:?}");
    for command in cargo {
        assert!(command.contains("--locked"), "cargo {command}");
    }
    assert!(read(".ci/run").contains("cargo test --locked"));
}

#[test]
fn the_toolchain_is_pinned_to_the_compiler_in_use() {
    let pin = read("rust-toolchain.toml");
    let channel = pin
        .lines()
        .find_map(|l| l.strip_prefix("channel = "))
        .expect("a channel")
        .trim_matches('"');
    assert!(
        channel.split('.').count() == 3 && channel.split('.').all(|p| p.parse::<u32>().is_ok()),
        "a full version, not {channel}"
    );
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&rustc.stdout);
    assert!(
        version.starts_with(&format!("rustc {channel} ")),
        "{version}"
    );
}

/// Depending on braid or braid-tokio compiles none of the command line's crates (issue 28).
#[test]
fn the_library_and_the_drop_in_depend_on_none_of_the_command_lines_crates() {
    let cli_only = [
        "clap",
        "clap_complete",
        "indicatif",
        "quick-junit",
        "ctrlc",
        "anyhow",
        "models",
    ];
    for package in ["braid", "braid-tokio"] {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let tree = std::process::Command::new(cargo)
            .args([
                "tree", "-e", "normal", "--target", "all", "--prefix", "none",
            ])
            .args(["-p", package])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            tree.status.success(),
            "{}",
            String::from_utf8_lossy(&tree.stderr)
        );
        let tree = String::from_utf8_lossy(&tree.stdout);
        for line in tree.lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            assert!(!cli_only.contains(&name), "{package} depends on {line}");
        }
        assert!(tree.lines().count() > 3, "{tree}");
    }
}
