//! `braid merge`: combines the JSON summaries of shards (`braid explore ... --shard i/n
//! --format json`) into the summary one unsharded exploration would have printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sim::scenario::Expected;

use crate::cli::{Format, MergeArgs};
use crate::report::ScenarioReport;
use crate::Verdict;

pub fn run(args: &MergeArgs) -> Result<Verdict> {
    // Scenarios in the order the first shard lists them.
    let mut index: BTreeMap<(String, Option<String>), usize> = BTreeMap::new();
    let mut reports: Vec<ScenarioReport> = Vec::new();
    for path in &args.files {
        for part in load(path)? {
            let key = (part.scenario.clone(), part.mutant.clone());
            match index.get(&key) {
                None => {
                    index.insert(key, reports.len());
                    reports.push(part);
                }
                Some(&i) => combine(&mut reports[i], part, path)?,
            }
        }
    }
    for r in &mut reports {
        r.distinct_schedules = r
            .schedule_digests
            .as_ref()
            .map_or(r.distinct_schedules, |d| d.len());
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
        r.schedule_digests = None;
        r.end_state_digests = None;
    }
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => reports.iter().for_each(|r| print!("{}", r.render_text())),
    }
    Ok(if reports.iter().any(|r| !r.violations.is_empty()) {
        Verdict::Violation
    } else {
        Verdict::Clean
    })
}

fn load(path: &PathBuf) -> Result<Vec<ScenarioReport>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a `braid explore --format json` summary",
            path.display()
        )
    })
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
    union(&mut total.schedule_digests, part.schedule_digests);
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
