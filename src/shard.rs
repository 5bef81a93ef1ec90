//! A test's search split across machines, as `braid explore --shard` splits a scenario's:
//! `BRAID_SHARD=i/n` (or `braid test --shard i/n`) makes each `#[braid::test]` and
//! `braid::check` explore shard i of n of its run space (random and PCT: run indices i-1,
//! i-1+n, ...; DFS and the default plan's DFS: every n-th subtree), and write its summary in
//! `braid explore --format json`'s format to `<out>/shards/<test>.<i>-of-<n>.json`, so
//! `braid merge` joins the shards into the verdict one machine would give: the same runs,
//! the same distinct schedules and end states, and the first violation by run index.
//! Which shard a check searches is one of its settings (`settings::Shard`, which restricts the
//! explorer); this module writes the shard's summary.

use std::path::{Path, PathBuf};

use sim::explore::{Found, SearchVerdict, Summary};
use sim::summary_file::{Judged, ScenarioReport, Subject, ViolationReport, SHARD_SUFFIX};

use crate::failure::Failure;
use crate::settings::{Settings, Shard};
use crate::test_model::TestModel;

/// A shard's summary of one test, and where it goes.
pub(crate) struct ShardSummary<'a> {
    pub shard: Shard,
    pub test: &'a str,
    pub model: &'a TestModel,
    pub settings: &'a Settings,
    pub summary: &'a Summary,
    /// The first violation this shard found, and the failure recorded from it.
    pub failure: Option<(&'a Found, &'a Failure)>,
}

impl ShardSummary<'_> {
    /// Writes it (atomically) into `<out>/shards/`, and for `braid test` into its report
    /// directory (`<test>.shard.json`), returning the first file, or says why it could not.
    pub fn write(&self, out: &Path) -> Result<PathBuf, String> {
        let stem = self.test.replace("::", ".");
        let (i, n) = (self.shard.index, self.shard.count);
        let file = out.join("shards").join(format!("{stem}.{i}-of-{n}.json"));
        let json = serde_json::to_string_pretty(&[self.report()]).map_err(|e| e.to_string())?;
        let write = |file: &Path| {
            sim::replay_file::write_atomic(file, json.as_bytes())
                .map_err(|e| format!("writing {}: {e}", file.display()))
        };
        write(&file)?;
        if let Some(dir) = &self.settings.report_dir {
            write(&dir.join(format!("{stem}{SHARD_SUFFIX}")))?;
        }
        Ok(file)
    }

    fn report(&self) -> ScenarioReport {
        let subject = Subject {
            scenario: self.test,
            model: "test",
            variant: "",
            mutant: None,
            seed: self.settings.seed,
            grain: sim::Model::grain(self.model),
            expected: "holds".to_string(),
        };
        let violations: Vec<ViolationReport> = self.failure.iter().map(violation).collect();
        let outcome = match (
            violations.is_empty(),
            self.summary.verdict(self.settings.strategy),
        ) {
            (false, _) => "violation",
            (true, SearchVerdict::Inconclusive(_)) => "inconclusive",
            (true, _) => "holds",
        };
        let judged = Judged {
            outcome,
            grain_check: None,
            matches_expectation: violations.is_empty() && outcome == "holds",
            violations,
            interrupted: false,
        };
        let shard = Some(self.shard.info(self.settings));
        ScenarioReport::of(&subject, self.summary, shard, judged)
    }
}

fn violation((found, failure): &(&Found, &Failure)) -> ViolationReport {
    let file = failure.file.as_ref().map(|f| f.display().to_string());
    ViolationReport::of(
        found,
        found.message.clone(),
        (failure.steps, failure.preemptions),
        file.unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_share_the_run_indices() {
        assert_eq!(Shard::parse("2/4"), Some(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1", "a/b", "1/0", ""] {
            assert_eq!(Shard::parse(bad), None, "{bad}");
        }
        // Indices 0..10 over 4 shards: 0,4,8 | 1,5,9 | 2,6 | 3,7.
        let shares: Vec<u64> = (1..=4)
            .map(|i| Shard { index: i, count: 4 }.share(10))
            .collect();
        assert_eq!(shares, [3, 3, 2, 2]);
    }
}
