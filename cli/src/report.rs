//! Exploration reports: one per scenario, as text for people and JSON for machines.

mod hex;
mod text;

use sim::shrink::Minimality;

use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize)]
pub struct ViolationReport {
    pub invariant: String,
    pub message: String,
    /// The first failing run's index (reproducible from seed + strategy + index; a DFS's
    /// index counts the runs its reduction cut short).
    pub first_run: u64,
    /// Runs counted up to and including the first failing one (as `runs` counts them).
    #[serde(default)]
    pub runs_to_first: u64,
    /// Runs that broke this invariant.
    pub count: u64,
    pub time_to_first_ms: f64,
    /// Of the minimised schedule (as found, with --no-shrink).
    pub steps: usize,
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
    pub found_preemptions: usize,
    pub replay_file: String,
}

/// The version of every `--format json` output's fields (explore, merge, mutants, replay, ci).
/// A field's meaning changes, or one is removed, only with a new version.
pub const REPORT_FORMAT: u32 = 1;

/// Which part of a split exploration a report covers (`--shard i/n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// Shard i of n, 1-based.
    pub index: u64,
    pub count: u64,
    /// The run budget of the whole exploration, before it was split (none: a time budget or an
    /// exhaustive search).
    pub budget_runs: Option<u64>,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// `REPORT_FORMAT`.
    pub format: u32,
    pub scenario: String,
    pub model: String,
    pub variant: String,
    /// The guard knocked out, for a mutant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant: Option<String>,
    pub strategy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    pub seed: u64,
    /// With --shard: which shard of how many, of which budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    pub runs: u64,
    pub distinct_schedules: usize,
    /// `distinct_schedules` is a sketch's estimate (about 0.8% standard error): there were more
    /// than `sim::distinct::Distinct::CAP` of them, past which they are not kept one by one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct_schedules_estimated: bool,
    pub elapsed_ms: f64,
    pub runs_per_sec: f64,
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
    /// Under the default plan: how far its DFS got and how many portfolio runs it took turns
    /// with ("every schedule within 2 preemptions, then 9000 portfolio runs").
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_bound: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<sim::strategy::Reduction>,
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
    pub schedule_sketch: Option<sim::distinct::Sketch>,
    /// With --shard: the digests of the end states reached, so `braid merge` counts them exactly.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex")]
    pub end_state_digests: Option<Vec<u64>>,
    pub determinism_checked: u64,
    /// Stopped by Ctrl-C: a partial exploration, its violations written as found.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    pub outcome: String,
    pub expected: String,
    pub matches_expectation: bool,
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

#[derive(Clone, Serialize, Deserialize)]
pub struct AuditSummary {
    /// Branches the reduction pruned in all.
    pub pruned_branches: u64,
    /// Of them, re-explored (a seeded sample), and how many of those to the end of their subtree.
    pub audited: usize,
    pub complete: usize,
    pub runs: u64,
    pub misses: Vec<String>,
}

/// The grain check of a coarse-grain scenario that held: portfolio runs at access grain.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GrainCheckReport {
    pub runs: u64,
    /// The invariant they broke, and how (none: the coarse grain hid nothing they found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
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
