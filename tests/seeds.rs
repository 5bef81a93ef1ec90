//! The regression corpus: every replay file under seeds/ still reproduces its recorded
//! violation, with the recorded trace digest.

use std::path::{Path, PathBuf};

use sim::replay_file::{DigestCheck, ReplayFile};
use sim::strategy::{Guided, Replay};
use sim::{run_once, RunConfig};

fn replay_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("seeds/ exists") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            replay_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
}

#[test]
fn every_seed_reproduces_its_violation() {
    let mut files = Vec::new();
    replay_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds"),
        &mut files,
    );
    files.sort();
    assert!(!files.is_empty(), "the corpus is not empty");
    for path in files {
        let file = ReplayFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let model = models::registry::build_mutant(
            &file.model,
            &file.variant,
            &file.params,
            file.mutant.as_deref(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let config = RunConfig {
            max_steps: file.max_steps,
            trace: true,
            record_accesses: false,
        };
        let replay = Box::new(Replay::strict(file.decisions.clone()));
        let r = run_once(model.as_ref(), replay, file.found.run, &config).0;
        let v = r
            .violation()
            .unwrap_or_else(|| panic!("{}: holds", path.display()));
        assert_eq!(v, &file.violation, "{}", path.display());
        assert_eq!(
            file.check_digest(r.digest),
            DigestCheck::Same,
            "{}",
            path.display()
        );
        assert_eq!(r.preemptions, file.preemptions, "{}", path.display());
        // 1-minimal: dropping any one preemption loses the failure (or needs more elsewhere).
        let quiet = RunConfig {
            trace: false,
            ..config
        };
        for &step in &r.preempted_steps {
            let switches = sim::shrink::without_preemption(&r.decisions(), step);
            let alt = run_once(model.as_ref(), Box::new(Guided::new(switches)), 0, &quiet).0;
            assert!(
                alt.violation().is_none_or(|w| w.invariant != v.invariant)
                    || alt.preemptions > r.preemptions,
                "{}: the preemption at step {step} is not needed",
                path.display()
            );
        }
        // Pin the minimised trace: a model change that alters a counterexample shows up in review.
        let name = path
            .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds"))
            .unwrap()
            .with_extension("")
            .to_string_lossy()
            .replace(['/', '\\'], "__");
        insta::assert_snapshot!(name, r.trace.unwrap().render_text());
    }
}
