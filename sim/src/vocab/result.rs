//! What one run came to (`RunResult`): how it ended, the decisions it took, its size, digests
//! and accesses. Made by `run::run_once`, read by the strategies (`Scheduler::end_run`), the
//! explorer, the shrinker and the replay files: so it sits below all of them.

use std::sync::Arc;

use super::{ObjId, StepAccesses, TaskId};
use crate::schedule::{Decision, Divergence};
use crate::trace::Trace;
use crate::Violation;

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// The run reached quiescence (no task could move) with every invariant holding.
    Holds,
    /// An invariant broke (during the run or at its end).
    Violation(Violation),
    /// The run did not follow the decisions it was given (a replay of a changed model, or a
    /// strategy bug).
    Diverged(Divergence),
    /// Cut short by an exhaustive strategy: equivalent to a schedule already explored.
    Pruned,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// How the run ended.
    pub outcome: RunOutcome,
    /// The decisions taken, kept compact: most runs never need them by name.
    pub(crate) schedule: Schedule,
    /// Steps the run took (one per scheduling point reached).
    pub steps: usize,
    /// Task switches the strategy forced while the running task could have continued.
    pub preemptions: usize,
    /// Of those, the strategy's interventions, each its step and kind ("crash", "reset",
    /// "partition", "clock jump").
    pub interventions: Vec<(usize, String)>,
    /// Nodes started, and fault sites started: what crashes and faults could strike.
    pub nodes: usize,
    /// Fault sites started (disks, links): what faults could strike.
    pub fault_sites: usize,
    /// The steps at which a still-enabled task was preempted.
    pub preempted_steps: Vec<usize>,
    /// Tasks spawned during the run.
    pub tasks: usize,
    /// A digest of every step (task, operation, object, choice) and every model event.
    pub digest: u64,
    /// A digest of each task's own sequence of events: the same for schedules that differ only
    /// in the order of independent steps.
    pub end_state: u64,
    /// Per step, the objects it accessed (when `RunConfig::record_accesses`).
    pub accesses: StepAccesses,
    /// Per task, the step during which its parent spawned it (`None`: spawned by the setup): a
    /// child's steps happen after its spawn.
    pub spawned_at: Vec<Option<usize>>,
    /// The operations tasks were parked on when the run ended, by task, with their object
    /// (when `RunConfig::record_accesses`): they never ran, but they race all the same.
    pub pending: Vec<(usize, ObjId)>,
    /// A task yielded fairly (`sim::yield_now`): only fair schedules were open to this run.
    pub yielded_fairly: bool,
    /// The run has dependencies no reduction sees (a crash or fault budget): it is searched
    /// without reduction.
    pub used_time: bool,
    /// The run set a timer (`sim::time`): a search by trace sees time's dependencies (a step
    /// that reads the time or changes the timers accesses one object, a clock jump depends on
    /// every step), one by value does not (see `Explorer::adapt_to`).
    pub set_timers: bool,
    /// The run's trace, when `RunConfig::trace` asked for one.
    pub trace: Option<Trace>,
}

/// A run's decisions by task number, and the tasks' names.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    pub(crate) recorded: Vec<Recorded>,
    pub(crate) names: Vec<Arc<str>>,
    /// What the values drawn within a step decided, by their index in `recorded`.
    pub(crate) labels: std::collections::BTreeMap<usize, Arc<str>>,
}

impl RunResult {
    /// Its size in words: "1 crash, 1 reset, 2 preemptions", where the preemptions are the
    /// task switches the strategy forced besides its interventions.
    pub fn size_in_words(&self) -> String {
        describe_size(self.preemptions, &self.interventions)
    }

    /// The ordinals, among the run's choices, of the values drawn within a step (a crash's
    /// decision per unsynced write; 0 is the weakest outcome of each): those with a label.
    pub fn drawn(&self) -> Vec<usize> {
        let Schedule {
            recorded, labels, ..
        } = &self.schedule;
        let choices = recorded
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Recorded::Choice(_)));
        choices
            .enumerate()
            .filter(|(_, (at, _))| labels.contains_key(at))
            .map(|(ordinal, _)| ordinal)
            .collect()
    }

    /// The decisions taken, by stable task name: what a replay file records.
    pub fn decisions(&self) -> Vec<Decision> {
        let Schedule {
            recorded,
            names,
            labels,
        } = &self.schedule;
        recorded
            .iter()
            .enumerate()
            .map(|(i, d)| match *d {
                Recorded::Task(t) => Decision::Task(names[t as usize].clone()),
                Recorded::Choice(v) => Decision::Choice {
                    choose: v as usize,
                    what: labels.get(&i).cloned(),
                },
            })
            .collect()
    }

    /// The invariant the run broke, if it broke one.
    pub fn violation(&self) -> Option<&Violation> {
        match &self.outcome {
            RunOutcome::Violation(v) => Some(v),
            _ => None,
        }
    }
}

/// A decision as recorded during the run, by task number; named only when asked for (see
/// `RunResult::decisions`). Two words' worth of them fit a small allocation per run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Recorded {
    Task(u32),
    Choice(u32),
}

impl Recorded {
    pub(crate) fn task(t: TaskId) -> Self {
        Recorded::Task(u32::try_from(t.0).expect("fewer than 2^32 tasks"))
    }

    pub(crate) fn choice(v: usize) -> Self {
        Recorded::Choice(u32::try_from(v).expect("a choose value below 2^32"))
    }
}

/// "1 crash, 1 reset, 2 preemptions" from a preemption count that includes the interventions.
pub fn describe_size(preemptions: usize, interventions: &[(usize, String)]) -> String {
    let plural = |n: usize, what: &str| match (n, what) {
        (1, _) => format!("1 {what}"),
        (_, "crash") => format!("{n} crashes"),
        _ => format!("{n} {what}s"),
    };
    let mut by_kind: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (_, kind) in interventions {
        *by_kind.entry(kind).or_default() += 1;
    }
    let mut parts: Vec<String> = by_kind.iter().map(|(k, &n)| plural(n, k)).collect();
    let switches = preemptions.saturating_sub(interventions.len());
    parts.push(plural(switches, "preemption"));
    parts.join(", ")
}
