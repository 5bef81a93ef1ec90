//! An exploration's summary as a file (`--format json`): one per scenario or test, the same
//! format whoever writes it (`braid explore`, a `#[braid::test]` searching one shard of its
//! runs), so `braid merge` joins the shards of either. The CLI renders it as text.

mod hex;

use crate::audit::AuditReport;
use crate::distinct::Sketch;
use crate::explore::{Found, Summary};
use crate::shrink::Minimality;
use crate::strategy::{Reduction, StrategyKind};

use serde::{Deserialize, Serialize};

/// One invariant a search broke, as the summary file records it: its first failing run, found and
/// shrunk.
#[derive(Clone, Serialize, Deserialize)]
pub struct ViolationReport {
    /// The broken invariant's name.
    pub invariant: String,
    /// What the invariant said about the first failing run.
    pub message: String,
    /// The first failing run's index (reproducible from seed + strategy + index; a DFS's
    /// index counts the runs its reduction cut short).
    pub first_run: u64,
    /// Runs counted up to and including the first failing one (as `runs` counts them).
    #[serde(default)]
    pub runs_to_first: u64,
    /// Runs that broke this invariant.
    pub count: u64,
    /// Wall time from the start of the search to the first failing run, in milliseconds.
    pub time_to_first_ms: f64,
    /// Of the minimised schedule (as found, with --no-shrink).
    pub steps: usize,
    /// Preemptions in the minimised schedule (what shrinking minimises).
    pub preemptions: usize,
    /// What shrinking proved of `preemptions`: `minimum` or only `1-minimal` (absent with
    /// --no-shrink).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimality: Option<Minimality>,
    /// Shrinking's search below the 1-minimal count was cut by its time cap, not its run
    /// budget: the schedule may differ on another machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shrink_timed_out: bool,
    /// Of the schedule as found.
    pub found_steps: usize,
    /// Preemptions in the schedule as found, before shrinking.
    pub found_preemptions: usize,
    /// The replay file written for the minimised schedule (`braid replay` runs it).
    pub replay_file: String,
}

/// The version of every `--format json` output's fields (explore, merge, mutants, replay, ci).
/// A field's meaning changes, or one is removed, only with a new version.
pub const REPORT_FORMAT: u32 = 1;

/// A test's shard summary's name in `braid test`'s report directory, beside its outcome.
pub const SHARD_SUFFIX: &str = ".shard.json";

/// Which part of a split exploration a report covers (`--shard i/n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// Shard i of n, 1-based.
    pub index: u64,
    /// How many shards the exploration was split into (the n of i/n).
    pub count: u64,
    /// The run budget of the whole exploration, before it was split (none: a time budget or an
    /// exhaustive search).
    pub budget_runs: Option<u64>,
}

/// An exploration's summary file (`--format json`): what one search of one scenario, mutant or test
/// found, in the one format every writer shares and `braid merge` joins.
#[derive(Clone, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// `REPORT_FORMAT`.
    pub format: u32,
    /// The scenario's (or test's) name.
    pub scenario: String,
    /// The model the scenario explores.
    pub model: String,
    /// The model's variant (the broker's `fixed`, `racy`, ...).
    pub variant: String,
    /// The guard knocked out, for a mutant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant: Option<String>,
    /// The strategy's name (`random`, `pct`, `dfs`, `portfolio`, `pos`, `default`).
    pub strategy: String,
    /// PCT's bug depth d.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// The seed of the search's random choices: with the strategy, it replays every run.
    pub seed: u64,
    /// With --shard: which shard of how many, of which budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Runs explored to their end (not counting DFS runs a reduction cut short).
    pub runs: u64,
    /// Distinct schedules among the runs (by trace digest).
    pub distinct_schedules: usize,
    /// `distinct_schedules` is a sketch's estimate (about 0.8% standard error): there were more
    /// than `Distinct::CAP` (`crate::distinct`) of them, past which they are not kept one by one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct_schedules_estimated: bool,
    /// Wall time of the search, in milliseconds.
    pub elapsed_ms: f64,
    /// Runs per second of wall time.
    pub runs_per_sec: f64,
    /// The longest run, in steps.
    pub max_steps_seen: usize,
    /// Which operations were scheduling points: `access` (every operation on a primitive) or
    /// the coarser `await`.
    pub grain: String,
    /// At a coarse grain that held: what the access-grain runs of the grain check found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grain_check: Option<GrainCheckReport>,
    /// DFS explored every schedule (no preemption bound cut any): `holds` means every
    /// schedule at this scenario's sizes, not a sample.
    pub exhaustive: bool,
    /// Under the default plan: how far its DFS got and how many sampled runs it took turns
    /// with ("every schedule within 2 preemptions, then 9000 sampled runs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Tasks yielded fairly (`yield_now`): the schedules explored are the fair ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub yielded_fairly: bool,
    /// DFS explored every schedule with at most this many preemptions (a bounded search, or
    /// the deepest level an iterative deepening finished); absent when `exhaustive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proved_bound: Option<usize>,
    /// DFS runs cut as equivalent to an explored schedule (not counted in `runs`).
    pub pruned: u64,
    /// The DFS's preemption bound, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_bound: Option<usize>,
    /// The DFS's reduction (none, visited states, ...), for a DFS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<Reduction>,
    /// Distinct end states (each task's own event sequence).
    pub end_states: usize,
    /// PCT: the per-run probability bound 1/(n k^(d-1)) for a depth-d bug, from observed n, k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_bound: Option<f64>,
    /// PCT: the probability that these runs would have found a given depth-d bug.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_confidence: Option<f64>,
    /// With --shard: the trace digests of the runs (16 hex digits each), so `braid merge`
    /// counts distinct schedules exactly.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex")]
    pub schedule_digests: Option<Vec<u64>>,
    /// With --shard, past `Distinct::CAP` distinct schedules: their sketch instead of their
    /// digests (`{"precision": 14, "registers": "<hex>"}`), which `braid merge` merges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_sketch: Option<Sketch>,
    /// With --shard: the digests of the end states reached, so `braid merge` counts them exactly.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex")]
    pub end_state_digests: Option<Vec<u64>>,
    /// Runs re-executed to check determinism (fresh and replayed).
    pub determinism_checked: u64,
    /// Stopped by Ctrl-C: a partial exploration, its violations written as found.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `holds`, `violation`, `inconclusive` or `interrupted`.
    pub outcome: String,
    /// What the scenario expects (`Expected`'s text), against which `outcome` is judged.
    pub expected: String,
    /// Whether the outcome is what the scenario expects: what CI gates on.
    pub matches_expectation: bool,
    /// Each broken invariant's first failing run, in order of first appearance.
    pub violations: Vec<ViolationReport>,
    /// With --audit-reduction: the pruned branches re-explored by plain DFS, and what they
    /// reached that the reduced search did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSummary>,
}

impl ScenarioReport {
    /// "212 distinct schedules", or "about 3000000 distinct schedules (estimated)".
    pub fn distinct_text(&self) -> String {
        match self.distinct_schedules_estimated {
            true => format!(
                "about {} distinct schedules (estimated)",
                self.distinct_schedules
            ),
            false => format!("{} distinct schedules", self.distinct_schedules),
        }
    }
}

/// The reduction audit in the summary file (`--audit-reduction`): see `crate::audit`.
#[derive(Clone, Serialize, Deserialize)]
pub struct AuditSummary {
    /// Branches the reduction pruned in all.
    pub pruned_branches: u64,
    /// Of them, re-explored (a seeded sample), and how many of those to the end of their subtree.
    pub audited: usize,
    /// Audited branches whose whole subtree was explored (the others hit the audit's per-branch
    /// cap).
    pub complete: usize,
    /// Plain-DFS runs the audit made.
    pub runs: u64,
    /// What each miss reached that the reduced search did not, in words (none: the audit passed).
    pub misses: Vec<String>,
}

/// The grain check of a coarse-grain scenario that held: portfolio runs at access grain.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GrainCheckReport {
    /// Runs made at access grain.
    pub runs: u64,
    /// The invariant they broke, and how (none: the coarse grain hid nothing they found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
    /// What the broken invariant said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What the scenario declares its grain hides (`hides = "..."`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
}

impl GrainCheckReport {
    /// Whether what was found is what the scenario declared.
    pub fn as_declared(&self) -> bool {
        self.invariant == self.declared
    }
}

/// What a summary is of, besides the search: the names that identify it and what it was
/// expected to find.
pub struct Subject<'a> {
    /// The scenario's (or test's) name.
    pub scenario: &'a str,
    /// The model explored.
    pub model: &'a str,
    /// The model's variant.
    pub variant: &'a str,
    /// The guard knocked out, for a mutant.
    pub mutant: Option<&'a str>,
    /// The seed of the search.
    pub seed: u64,
    /// The grain the model ran at (its scheduling points).
    pub grain: crate::Grain,
    /// As a scenario declares it (`Expected`'s text).
    pub expected: String,
}

/// How the search was judged: its outcome, against the expectation, with the checks behind it.
pub struct Judged {
    /// `holds`, `violation`, `inconclusive` or `interrupted`.
    pub outcome: &'static str,
    /// The grain check's result, for a coarse-grain search that held.
    pub grain_check: Option<GrainCheckReport>,
    /// Whether the outcome is what `Subject::expected` expects.
    pub matches_expectation: bool,
    /// Each broken invariant's first failing run, as the file records it.
    pub violations: Vec<ViolationReport>,
    /// Stopped by Ctrl-C: the search is partial.
    pub interrupted: bool,
}

impl ViolationReport {
    /// The report of the violation the search `found`, whose schedule (shrunk, or as found)
    /// has `steps` and `preemptions` and was written to `replay_file`; no minimality claimed.
    pub fn of(
        found: &Found,
        message: String,
        (steps, preemptions): (usize, usize),
        replay_file: String,
    ) -> ViolationReport {
        ViolationReport {
            invariant: found.invariant.clone(),
            message,
            first_run: found.first_run,
            runs_to_first: found.runs_to_first,
            count: found.count,
            time_to_first_ms: found.time_to_first.as_secs_f64() * 1e3,
            steps,
            preemptions,
            minimality: None,
            shrink_timed_out: false,
            found_steps: found.run.steps,
            found_preemptions: found.run.preemptions,
            replay_file,
        }
    }
}

impl ScenarioReport {
    /// The summary file of `summary`, of `subject`, judged so; a shard's carries the digests
    /// `braid merge` counts across shards.
    pub fn of(
        subject: &Subject<'_>,
        summary: &Summary,
        shard: Option<ShardInfo>,
        judged: Judged,
    ) -> ScenarioReport {
        let strategy = summary.strategy;
        let (preemption_bound, reduction) = dfs_settings(strategy);
        let (schedule_digests, schedule_sketch, end_state_digests) =
            shard_digests(summary, shard.is_some());
        ScenarioReport {
            format: REPORT_FORMAT,
            scenario: subject.scenario.to_string(),
            model: subject.model.to_string(),
            variant: subject.variant.to_string(),
            mutant: subject.mutant.map(str::to_string),
            strategy: strategy.name().to_string(),
            depth: strategy.depth(),
            seed: subject.seed,
            shard,
            runs: summary.runs,
            distinct_schedules: summary.distinct_schedules,
            distinct_schedules_estimated: summary.distinct_estimated(),
            elapsed_ms: summary.elapsed.as_secs_f64() * 1e3,
            runs_per_sec: summary.runs_per_sec(),
            max_steps_seen: summary.max_steps_seen,
            grain: subject.grain.name().to_string(),
            grain_check: judged.grain_check,
            exhaustive: summary.exhaustive,
            yielded_fairly: summary.yielded_fairly,
            plan: summary.plan.map(|p| p.describe(summary.yielded_fairly)),
            proved_bound: summary.proved_bound,
            pruned: summary.pruned,
            preemption_bound,
            reduction,
            end_states: summary.end_states.len(),
            pct_bound: summary.pct_bound(),
            pct_confidence: summary.pct_confidence(),
            schedule_digests,
            schedule_sketch,
            end_state_digests,
            determinism_checked: summary.determinism_checked,
            interrupted: judged.interrupted,
            outcome: judged.outcome.to_string(),
            expected: subject.expected.clone(),
            matches_expectation: judged.matches_expectation,
            violations: judged.violations,
            audit: summary.audit.as_ref().map(audit_summary),
        }
    }
}

/// The explorer may have turned reduction off (bounded search, or a model it cannot see into).
fn dfs_settings(strategy: StrategyKind) -> (Option<usize>, Option<Reduction>) {
    match strategy {
        StrategyKind::Dfs {
            preemption_bound,
            reduction,
        } => (preemption_bound, Some(reduction)),
        _ => (None, None),
    }
}

/// For a shard: the digests of the schedules (or their sketch, past `Distinct::CAP`) and of
/// the end states, so `braid merge` counts them across shards.
fn shard_digests(
    summary: &Summary,
    sharded: bool,
) -> (Option<Vec<u64>>, Option<Sketch>, Option<Vec<u64>>) {
    let schedules = summary
        .schedules
        .digests()
        .filter(|_| sharded)
        .map(<[u64]>::to_vec);
    let sketch = summary.schedules.sketch().filter(|_| sharded).cloned();
    let end_states = sharded.then(|| summary.end_states.iter().copied().collect());
    (schedules, sketch, end_states)
}

fn audit_summary(a: &AuditReport) -> AuditSummary {
    AuditSummary {
        pruned_branches: a.pruned,
        audited: a.audited,
        complete: a.complete,
        runs: a.runs,
        misses: a.misses.iter().map(|m| m.what.clone()).collect(),
    }
}
