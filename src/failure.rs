//! A failing schedule as an artifact: shrunk, written as a replay file, explained by its trace,
//! and named in a message that says how to rerun it.

use std::fmt;
use std::path::{Path, PathBuf};

use sim::explore::Found;
use sim::replay_file::{digest_hex, FoundBy, ReplayFile, ShrunkFrom, FORMAT_VERSION};
use sim::{RunConfig, RunResult};

use crate::settings::Settings;
use crate::test_model::TestModel;

/// Where a test lives, filled in by `#[braid::test]`.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct TestInfo {
    /// `crate::module::name`.
    pub path: String,
    /// The test's source file, as `file!()` gives it.
    pub file: &'static str,
    pub package: &'static str,
    pub crate_name: &'static str,
    pub manifest_dir: &'static str,
}

impl TestInfo {
    pub(crate) fn unnamed(path: &str) -> TestInfo {
        TestInfo {
            path: path.to_string(),
            file: "",
            package: "",
            crate_name: "",
            manifest_dir: "",
        }
    }

    /// The test's name as the test harness filters it: its path without the crate.
    pub(crate) fn filter(&self) -> &str {
        self.path
            .split_once("::")
            .map_or(self.path.as_str(), |(_, rest)| rest)
    }

    /// The command that reruns this test alone with `file`'s schedule: `braid test` with the
    /// test's package, target and exact name, and the same as a plain `cargo test` with the cfg.
    pub(crate) fn rerun(&self, file: &Path) -> String {
        if self.package.is_empty() {
            // A `braid::check` outside `#[braid::test]`: no cargo command names it.
            return format!(
                "BRAID_REPLAY={} with the program that runs the check `{}`, or Check::replay",
                file.display(),
                self.path
            );
        }
        let args = self.cargo_test_args();
        format!(
            "BRAID_REPLAY={file} braid test -- {args}\n     or: BRAID_REPLAY={file} RUSTFLAGS=\"--cfg madsim\" cargo test {args}",
            file = file.display(),
        )
    }

    /// `cargo test`'s arguments that run this test alone: its package, its target (an
    /// integration test, the library or the binary) and its exact name.
    pub(crate) fn cargo_test_args(&self) -> String {
        let file = self.file.replace('\\', "/");
        let target = if file.starts_with("examples/") || file.contains("/examples/") {
            format!(" --example {}", self.crate_name)
        } else if self.crate_name != self.package.replace('-', "_") {
            format!(" --test {}", self.crate_name)
        } else if file.ends_with("src/main.rs") {
            format!(" --bin {}", self.package)
        } else {
            " --lib".to_string()
        };
        format!("-p {}{target} -- --exact {}", self.package, self.filter())
    }

    /// Where failures' replay files go: the settings', else `target/braid/`.
    pub(crate) fn out_dir(&self, settings: &Settings) -> PathBuf {
        if let Some(dir) = &settings.out {
            return dir.clone();
        }
        target_dir(self.manifest_dir).join("braid")
    }
}

/// The cargo target directory of the running test binary: `CARGO_TARGET_DIR`, else the
/// directory above the binary's `<profile>/deps/`, else `target/` in the manifest directory.
fn target_dir(manifest_dir: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().ok();
    let from_exe = exe.as_deref().and_then(|exe| {
        let deps = exe.parent().filter(|d| d.ends_with("deps"))?;
        Some(deps.parent()?.parent()?.to_path_buf())
    });
    from_exe.unwrap_or_else(|| Path::new(manifest_dir).join("target"))
}

/// A failing schedule: what broke, how it was found, and how to see it again. Its `Display`
/// is the message a failing `#[braid::test]` panics with.
///
/// ```
/// let report = braid::check(|| async { panic!("always fails") }).out(std::env::temp_dir()).run();
/// let failure = report.failure().unwrap();
/// assert_eq!(failure.invariant, "panic");
/// assert!(failure.to_string().contains("always fails"));
/// ```
#[derive(Clone, Debug)]
pub struct Failure {
    /// The test (or check) that failed.
    pub test: String,
    /// What broke: `panic`, `deadlock`, `livelock`, `step-bound` or a property's name.
    pub invariant: String,
    /// The violation's message (a panic's includes the task's own message).
    pub message: String,
    /// How the schedule was found: the strategy, seed and run.
    pub found_by: String,
    /// The shrunk schedule's size.
    pub steps: usize,
    /// Preemptions in the shrunk schedule (the strategy's interventions included).
    pub preemptions: usize,
    /// The same in words, interventions apart: "1 crash, 1 reset, 2 preemptions".
    pub size: String,
    /// The replay file, if one was written or replayed.
    pub file: Option<PathBuf>,
    /// The shrunk schedule's trace, one line per step (and, at a deadlock, who waits on what).
    pub trace: String,
    /// The same trace as data, for the pictures (`braid replay --svg` of a test's file).
    pub run_trace: Option<sim::trace::Trace>,
    /// The command that reruns the test with this schedule.
    pub rerun: String,
    /// Where the schedule came from.
    pub source: Source,
}

/// Where a failing schedule came from.
///
/// ```
/// let report = braid::check(|| async { panic!("boom") }).out(std::env::temp_dir()).run();
/// assert_eq!(report.failure().unwrap().source, braid::Source::Explored);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Found by exploring, and written to `Failure::file`.
    Explored,
    /// A committed regression file that fails again.
    Regression,
    /// The file `BRAID_REPLAY` named, reproduced exactly.
    Replay,
}

impl Failure {
    /// The failure a replay file's schedule shows when followed: the run's violation, size and
    /// trace, the file's provenance, and the command that reruns it (or, if the file could not
    /// be written, why not).
    pub(crate) fn replayed(
        info: &TestInfo,
        file: &ReplayFile,
        run: &RunResult,
        written: Result<&Path, String>,
        source: Source,
    ) -> Failure {
        let violation = run.violation().unwrap_or(&file.violation);
        let (path, rerun) = match written {
            Ok(path) => (Some(path.to_path_buf()), info.rerun(path)),
            Err(why) => (None, why),
        };
        Failure {
            test: info.path.clone(),
            invariant: violation.invariant.clone(),
            message: violation.message.clone(),
            found_by: describe_found(&file.found),
            steps: run.steps,
            preemptions: run.preemptions,
            size: run.size_in_words(),
            file: path,
            trace: abridged(
                &run.trace
                    .as_ref()
                    .map(|t| t.render_text() + &t.render_wait_for())
                    .unwrap_or_default(),
            ),
            run_trace: run.trace.clone(),
            rerun,
            source,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.source {
            Source::Explored => "failed",
            Source::Regression => "failed again on a committed regression file",
            Source::Replay => "failed again on the replayed schedule",
        };
        writeln!(f, "braid: test {} {what}", self.test)?;
        writeln!(f, "  {}: {}", self.invariant, self.message)?;
        writeln!(
            f,
            "  found by {}; {} steps, {}",
            self.found_by, self.steps, self.size
        )?;
        if let Some(file) = &self.file {
            writeln!(f, "  replay file: {}", file.display())?;
        }
        write!(f, "  rerun: {}", self.rerun)?;
        if self.source == Source::Explored {
            write!(
                f,
                "\n  to keep it as a regression, commit it under braid-regressions/ beside the test"
            )?;
        }
        Ok(())
    }
}

/// Shrinks a found violation, writes its replay file and builds the failure.
pub(crate) fn record(
    model: &TestModel,
    info: &TestInfo,
    settings: &Settings,
    found: &Found,
) -> Failure {
    let config = RunConfig {
        max_steps: settings.max_steps,
        trace: false,
        record_accesses: false,
    };
    let shrunk = sim::shrink::shrink(model, &found.run, &config);
    let file = ReplayFile {
        format: FORMAT_VERSION,
        scenario: info.path.clone(),
        model: "test".to_string(),
        variant: info.package.to_string(),
        mutant: None,
        params: serde_json::json!({ "package": info.package, "crate": info.crate_name, "file": info.file }),
        grain: Some(sim::Model::grain(model)),
        max_steps: settings.max_steps,
        found: FoundBy {
            strategy: found.by.name().to_string(),
            depth: found.by.depth(),
            seed: settings.seed,
            run: found.first_run,
        },
        violation: shrunk
            .run
            .violation()
            .cloned()
            .expect("a shrunk failing run fails"),
        steps: shrunk.run.steps,
        preemptions: shrunk.run.preemptions,
        minimality: Some(shrunk.minimality),
        shrunk_from: Some(ShrunkFrom {
            steps: shrunk.before_steps,
            preemptions: shrunk.before_preemptions,
        }),
        digest: digest_hex(shrunk.run.digest),
        decisions: shrunk.run.decisions(),
    };
    let dir = info.out_dir(settings);
    let path = dir.join(format!("{}.json", info.path.replace("::", ".")));
    let written = match std::fs::create_dir_all(&dir).and_then(|_| file.write_atomic(&path)) {
        Ok(()) => Ok(path.as_path()),
        Err(e) => Err(format!(
            "(the replay file could not be written to {}: {e})",
            path.display()
        )),
    };
    let traced = traced_replay(model, &file);
    Failure::replayed(info, &file, &traced, written, Source::Explored)
}

pub(crate) fn describe_found(found: &FoundBy) -> String {
    let depth = found
        .depth
        .map(|d| format!(" depth {d}"))
        .unwrap_or_default();
    format!(
        "{}{depth}, seed {}, run {}",
        found.strategy, found.seed, found.run
    )
}

/// Follows a replay file's schedule once, with a trace.
pub(crate) fn traced_replay(model: &TestModel, file: &ReplayFile) -> RunResult {
    let model = match file.grain {
        Some(grain) => model.clone().with_grain(grain),
        None => model.clone(),
    };
    file.follow(&model, true)
}

/// A trace to print: whole up to 200 lines, else its first and last 60 and, between them, the
/// steps a strategy chose against the run's flow (marked `*`: a preemption, a crash, a fault)
/// with the events under them (what a crash lost, what arrived), the rest elided (a livelock's
/// runs to the step bound; the replay shows all of it).
pub(crate) fn abridged(trace: &str) -> String {
    const KEEP: usize = 60;
    let lines: Vec<&str> = trace.lines().collect();
    if lines.len() <= 200 {
        return trace.to_string();
    }
    let middle = KEEP..lines.len() - KEEP;
    let mut kept = vec![false; lines.len()];
    kept[..KEEP].fill(true);
    kept[middle.end..].fill(true);
    for i in middle.clone() {
        kept[i] = is_chosen_step(lines[i]) || (is_event(lines[i]) && kept[i - 1]);
    }
    let mut out = String::new();
    let mut elided = 0;
    for (line, keep) in lines.iter().zip(kept) {
        if !keep {
            elided += 1;
            continue;
        }
        if elided > 0 {
            out.push_str(&format!("   ... {elided} more steps ...\n"));
            elided = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A step line whose number is marked `*` (`" 133* crash(kv) ..."`).
fn is_chosen_step(line: &str) -> bool {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && rest[digits..].starts_with('*')
}

/// A line under a step: an event (no step number of its own).
fn is_event(line: &str) -> bool {
    line.trim_start()
        .chars()
        .next()
        .is_some_and(|c| !c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(path: &str, file: &'static str, crate_name: &'static str) -> TestInfo {
        TestInfo {
            path: path.to_string(),
            file,
            package: "tokio-user",
            crate_name,
            manifest_dir: "",
        }
    }

    #[test]
    fn an_abridged_trace_keeps_the_chosen_steps_and_their_events() {
        let mut trace: Vec<String> = (0..300)
            .map(|i| format!("{i:4}  main   yield_now"))
            .collect();
        trace[150] = " 150* crash(kv)      crash node kv".into();
        trace.insert(
            151,
            "      crash(kv)        | disk(kv): the write is lost".into(),
        );
        trace.insert(152, "      clock            | time advances".into());
        let text = abridged(&trace.join("\n"));
        assert!(text.contains(" 150* crash(kv)"), "{text}");
        assert!(text.contains("the write is lost"), "{text}");
        assert!(text.contains("time advances"), "{text}");
        assert!(!text.contains(" 149  main"), "{text}");
        assert!(text.contains("   ... 90 more steps ...\n 150*"), "{text}");
        assert!(
            text.contains("   ... 89 more steps ...\n 240  main"),
            "{text}"
        );
        assert_eq!(abridged("  0  main  start\n"), "  0  main  start\n");
    }

    #[test]
    fn the_rerun_command_names_one_test_its_target_and_the_cfg() {
        let file = Path::new("target/braid/braid/pool.race.json");
        let rerun = info("pool::race", "tests/pool.rs", "pool").rerun(file);
        assert_eq!(
            rerun,
            "BRAID_REPLAY=target/braid/braid/pool.race.json braid test -- -p tokio-user --test pool -- --exact race\n     \
             or: BRAID_REPLAY=target/braid/braid/pool.race.json RUSTFLAGS=\"--cfg madsim\" cargo test -p tokio-user --test pool -- --exact race"
        );
        let unit = info("tokio_user::pool::tests::race", "src/pool.rs", "tokio_user");
        assert_eq!(
            unit.cargo_test_args(),
            "-p tokio-user --lib -- --exact pool::tests::race"
        );
        let bin = info("tokio_user::tests::race", "src/main.rs", "tokio_user");
        assert_eq!(
            bin.cargo_test_args(),
            "-p tokio-user --bin tokio-user -- --exact tests::race"
        );
        let example = info(
            "lost_update::lost_update",
            "examples/lost_update.rs",
            "lost_update",
        );
        assert_eq!(
            example.cargo_test_args(),
            "-p tokio-user --example lost_update -- --exact lost_update"
        );
    }
}
