//! `braid merge`: combines the JSON summaries of shards (`braid explore ... --shard i/n
//! --format json`) into the summary one unsharded exploration would have printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sim::distinct::{Distinct, Sketch};
use sim::scenario::Expected;

use crate::cli::{Format, MergeArgs};
use crate::report::{RenderText, ScenarioReport, REPORT_FORMAT};
use crate::Exit;

pub fn run(args: &MergeArgs) -> Result<Exit> {
    // Scenarios in the order the first file lists them; each scenario's shards, with their file.
    let mut index: BTreeMap<(String, Option<String>), usize> = BTreeMap::new();
    let mut groups: Vec<Vec<(PathBuf, ScenarioReport)>> = Vec::new();
    for path in &args.files {
        for part in load(path)? {
            check_part(&part, path)?;
            let key = (part.scenario.clone(), part.mutant.clone());
            let i = *index.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[i].push((path.clone(), part));
        }
    }
    let mut reports = Vec::new();
    for group in groups {
        check_complete(&group)?;
        let mut parts = group.into_iter();
        let (_, mut total) = parts.next().expect("a group has a shard");
        let mut pct_bounds = vec![total.pct_bound];
        for (path, part) in parts {
            pct_bounds.push(part.pct_bound);
            combine(&mut total, part, &path)?;
        }
        finish(&mut total, &pct_bounds)?;
        reports.push(total);
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => reports.iter().for_each(|r| print!("{}", r.render_text())),
    }
    Ok(if reports.iter().any(|r| !r.violations.is_empty()) {
        Exit::Violation
    } else {
        Exit::Clean
    })
}

fn load(path: &PathBuf) -> Result<Vec<ScenarioReport>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a `braid explore --shard i/n --format json` summary of format {REPORT_FORMAT}",
            path.display()
        )
    })
}

/// One shard's report must say which shard it is, of this format, and be whole.
fn check_part(part: &ScenarioReport, path: &Path) -> Result<()> {
    let name = &part.scenario;
    if part.format != REPORT_FORMAT {
        bail!(
            "{}: {name}: summary format {}, this braid merges format {REPORT_FORMAT}",
            path.display(),
            part.format
        );
    }
    if part.shard.is_none() {
        bail!(
            "{}: {name} is not a shard (explore it with --shard i/n)",
            path.display()
        );
    }
    if part.interrupted {
        bail!(
            "{}: {name}: this shard was interrupted and covers only part of its runs",
            path.display()
        );
    }
    if (part.schedule_digests.is_none() && part.schedule_sketch.is_none())
        || part.end_state_digests.is_none()
    {
        bail!("{}: {name}: the shard lists no digests", path.display());
    }
    Ok(())
}

/// A scenario's shards must be 1..=n of one split, each exactly once.
fn check_complete(group: &[(PathBuf, ScenarioReport)]) -> Result<()> {
    let (first_path, first) = &group[0];
    let name = &first.scenario;
    let info = first.shard.expect("checked");
    let mut seen: BTreeMap<u64, &Path> = BTreeMap::new();
    for (path, part) in group {
        let shard = part.shard.expect("checked");
        if (shard.count, shard.budget_runs) != (info.count, info.budget_runs) {
            bail!(
                "{}: {name} is shard {}/{} of {} runs, but {} has shard {}/{} of {} runs: not one split",
                path.display(),
                shard.index,
                shard.count,
                runs_text(shard.budget_runs),
                first_path.display(),
                info.index,
                info.count,
                runs_text(info.budget_runs)
            );
        }
        if let Some(other) = seen.insert(shard.index, path) {
            bail!(
                "{name}: shard {}/{} is given twice ({} and {})",
                shard.index,
                shard.count,
                other.display(),
                path.display()
            );
        }
    }
    let missing: Vec<String> = (1..=info.count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{}", info.count))
        .collect();
    if !missing.is_empty() {
        bail!("{name}: shard {} missing", missing.join(", "));
    }
    Ok(())
}

fn runs_text(runs: Option<u64>) -> String {
    runs.map_or("unbounded".into(), |r| r.to_string())
}

/// What the combined shards say as one exploration.
fn finish(r: &mut ScenarioReport, pct_bounds: &[Option<f64>]) -> Result<()> {
    let schedules = match (r.schedule_digests.take(), r.schedule_sketch.take()) {
        (_, Some(sketch)) => Some(Distinct::from_sketch(sketch)),
        (Some(digests), None) => Some(Distinct::from_digests(digests)),
        (None, None) => None,
    };
    if let Some(s) = schedules {
        r.distinct_schedules = s.count() as usize;
        r.distinct_schedules_estimated = s.is_estimate();
    }
    r.runs_per_sec = if r.elapsed_ms > 0.0 {
        r.runs as f64 / (r.elapsed_ms / 1e3)
    } else {
        0.0
    };
    r.outcome = if r.violations.is_empty() {
        "holds"
    } else {
        "violation"
    }
    .to_string();
    let expected = Expected::try_from(r.expected.clone()).map_err(anyhow::Error::msg)?;
    r.matches_expectation = expected.matches(r.violations.iter().map(|v| v.invariant.as_str()));
    r.end_states = r
        .end_state_digests
        .as_ref()
        .map_or(r.end_states, |d| d.len());
    // PCT: the weakest shard's per-run bound, over every shard's runs.
    let bound = pct_bounds
        .iter()
        .copied()
        .collect::<Option<Vec<f64>>>()
        .and_then(|b| b.into_iter().reduce(f64::min));
    r.pct_bound = bound;
    r.pct_confidence = bound.map(|p| 1.0 - (1.0 - p).powf(r.runs as f64));
    r.shard = None;
    r.end_state_digests = None;
    Ok(())
}

/// Adds one shard's summary of a scenario to the running total.
fn combine(total: &mut ScenarioReport, part: ScenarioReport, path: &Path) -> Result<()> {
    if (total.strategy.as_str(), total.seed, total.depth)
        != (part.strategy.as_str(), part.seed, part.depth)
    {
        bail!(
            "{}: {} was explored with a different strategy or seed than the other shards",
            path.display(),
            part.scenario
        );
    }
    total.runs += part.runs;
    total.elapsed_ms = total.elapsed_ms.max(part.elapsed_ms);
    total.max_steps_seen = total.max_steps_seen.max(part.max_steps_seen);
    total.determinism_checked += part.determinism_checked;
    total.pruned += part.pruned;
    total.proved_bound = sim::explore::merged_proved_bound(
        (total.exhaustive, total.proved_bound),
        (part.exhaustive, part.proved_bound),
    );
    total.exhaustive &= part.exhaustive;
    total.distinct_schedules += part.distinct_schedules;
    // Without digests (a summary from before they were written) the count is a lower bound.
    total.end_states = total.end_states.max(part.end_states);
    union_schedules(total, part.schedule_digests, part.schedule_sketch);
    union(&mut total.end_state_digests, part.end_state_digests);
    for v in part.violations {
        match total
            .violations
            .iter_mut()
            .find(|t| t.invariant == v.invariant)
        {
            Some(t) => {
                let count = t.count + v.count;
                if v.first_run < t.first_run {
                    *t = v;
                }
                t.count = count;
            }
            None => total.violations.push(v),
        }
    }
    total.violations.sort_by_key(|v| v.first_run);
    Ok(())
}

/// The union of the shards' schedules: their digests while every shard lists them (and they
/// stay within `Distinct::CAP`), else one sketch of them all.
fn union_schedules(total: &mut ScenarioReport, digests: Option<Vec<u64>>, sketch: Option<Sketch>) {
    let mine = match (total.schedule_digests.take(), total.schedule_sketch.take()) {
        (_, Some(sketch)) => Distinct::from_sketch(sketch),
        (Some(digests), None) => Distinct::from_digests(digests),
        (None, None) => return,
    };
    let theirs = match (digests, sketch) {
        (_, Some(sketch)) => Distinct::from_sketch(sketch),
        (Some(digests), None) => Distinct::from_digests(digests),
        (None, None) => return,
    };
    let mut all = mine;
    all.merge(theirs);
    total.schedule_digests = all.digests().map(<[u64]>::to_vec);
    total.schedule_sketch = all.sketch().cloned();
}

/// The union of two shards' digests; unknown if either is.
fn union(total: &mut Option<Vec<u64>>, part: Option<Vec<u64>>) {
    match (total, part) {
        (Some(all), Some(more)) => {
            all.extend(more);
            all.sort_unstable();
            all.dedup();
        }
        (slot, _) => *slot = None,
    }
}
