//! `braid shrink`: minimise an existing replay file's schedule, in place.

use anyhow::{bail, Context, Result};
use sim::replay_file::{digest_hex, DigestCheck, ReplayFile, ShrunkFrom, FORMAT_VERSION};
use sim::shrink::shrink_with;
use sim::strategy::Replay;
use sim::{run_once, RunConfig, RunOutcome};

use crate::cli::ShrinkArgs;
use crate::Verdict;

pub fn run(args: &ShrinkArgs) -> Result<Verdict> {
    let mut file = ReplayFile::load(&args.file)?;
    let path = args.file.display();
    let model = models::registry::build_mutant(
        &file.model,
        &file.variant,
        &file.params,
        file.mutant.as_deref(),
    )
    .with_context(|| format!("{path}"))?;
    let config = RunConfig {
        max_steps: file.max_steps,
        trace: false,
        record_accesses: false,
    };
    let replay =
        Box::new(Replay::strict(file.decisions.clone()).watching_states(model.state_visible()));
    let (found, _) = run_once(model.as_ref(), replay, file.found.run, &config);
    match &found.outcome {
        RunOutcome::Diverged(d) => bail!("{path}: the model drifted: {d}"),
        RunOutcome::Violation(v) if v.invariant == file.violation.invariant => {
            // A file `replay` and `ci` reject as drifted is not silently rewritten here: the
            // schedule it holds no longer tells the story it recorded. (A format 1 file, whose
            // digest this braid does not compute, is what `shrink` upgrades.)
            if let DigestCheck::Drifted { replayed, recorded } = file.check_digest(found.digest) {
                bail!(
                    "{path}: the model drifted: same violation, but the trace digest is {replayed}, \
                     recorded {recorded}; re-record it with `braid explore`"
                );
            }
            if v.message != file.violation.message || v.step != file.violation.step {
                bail!(
                    "{path}: the model drifted: {} now at step {} with \"{}\", recorded at step {} \
                     with \"{}\"; re-record it with `braid explore`",
                    v.invariant,
                    v.step,
                    v.message,
                    file.violation.step,
                    file.violation.message
                );
            }
        }
        _ => bail!(
            "{path}: the recorded violation {} no longer reproduces; nothing to shrink",
            file.violation.invariant
        ),
    }
    let options = args.shrink.options().map_err(anyhow::Error::msg)?;
    let shrunk = shrink_with(model.as_ref(), &found, &config, options);
    let run = shrunk.run;
    println!(
        "{path}: {} steps, {} preemptions -> {} steps, {} preemptions, {}{} ({} guided runs, {} DFS runs)",
        found.steps,
        found.preemptions,
        run.steps,
        run.preemptions,
        shrunk.minimality,
        if shrunk.timed_out {
            " (the search below ran out of time)"
        } else {
            ""
        },
        shrunk.attempts,
        shrunk.dfs_runs
    );
    file.shrunk_from.get_or_insert(ShrunkFrom {
        steps: found.steps,
        preemptions: found.preemptions,
    });
    file.violation = run
        .violation()
        .cloned()
        .expect("shrinking keeps the violation");
    file.steps = run.steps;
    file.preemptions = run.preemptions;
    file.minimality = Some(shrunk.minimality);
    // Written in this braid's format, with its digest.
    file.format = FORMAT_VERSION;
    file.digest = digest_hex(run.digest);
    file.decisions = run.decisions();
    file.write_atomic(&args.file)
        .with_context(|| format!("writing {path}"))?;
    Ok(Verdict::Clean)
}
