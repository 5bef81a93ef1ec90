//! Runs one schedule: a fresh madsim runtime, the model's tasks, the baton, and the verdict.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::model::Model;
pub use crate::rt::access::{Access, AccessKind, StepAccesses};
use crate::rt::execution::{End, Execution, Recorded, Setup};
use crate::rt::{self, with_exec};
use crate::schedule::{Decision, Divergence};
use crate::strategy::Strategy;
use crate::trace::Trace;
use crate::Violation;

/// Whether this build runs on madsim's simulated runtime (`--cfg madsim`). Without it the engine
/// cannot control scheduling and refuses to run.
pub const SIMULATED: bool = cfg!(madsim);

/// Per-run settings.
#[derive(Clone, Copy, Debug)]
pub struct RunConfig {
    /// A run still going round in yields at this many steps ends as a `livelock`; one that does
    /// not yield goes on to `LONG_RUN_FACTOR` times this, then ends as a `step-bound` (see
    /// `LONG_RUN_FACTOR`).
    pub max_steps: usize,
    /// Record a full trace (replay and rendering); exploration only keeps the digest.
    pub trace: bool,
    /// Record which objects each step accesses (for partial-order reduction).
    pub record_accesses: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            max_steps: 10_000,
            trace: false,
            record_accesses: false,
        }
    }
}

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
    schedule: Schedule,
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
    pub pending: Vec<(usize, crate::rt::ObjId)>,
    /// A task yielded fairly (`sim::yield_now`): only fair schedules were open to this run.
    pub yielded_fairly: bool,
    /// The run set a timer (`sim::time`): reductions do not see time's dependencies.
    pub used_time: bool,
    /// The run's trace, when `RunConfig::trace` asked for one.
    pub trace: Option<Trace>,
}

/// A run's decisions by task number, and the tasks' names.
#[derive(Clone, Debug)]
struct Schedule {
    recorded: Vec<Recorded>,
    names: Vec<Arc<str>>,
    /// What the values drawn within a step decided, by their index in `recorded`.
    labels: std::collections::BTreeMap<usize, Arc<str>>,
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

/// Runs `model` once under `strategy` as run number `run`, and hands the strategy back.
pub fn run_once(
    model: &dyn Model,
    mut strategy: Box<dyn Strategy>,
    run: u64,
    config: &RunConfig,
) -> (RunResult, Box<dyn Strategy>) {
    rt::model_task::install_panic_hook();
    let needs = strategy.begin_run(run);
    let clock_jumps = match needs.clock_jumps {
        true => model.clock_jumps(),
        false => 0,
    };
    let setup = Setup {
        grain: model.grain(),
        max_steps: config.max_steps,
        trace: config.trace,
        record_accesses: config.record_accesses,
        value_state: needs.value_state,
        stackful: model.stackful_tasks(),
        eager_points: model.one_point_per_poll() && !model.stackful_tasks() && model.crashes() == 0,
        crashes: model.crashes(),
        faults: model.network_faults(),
        clock_jumps,
    };
    let exec = Rc::new(RefCell::new(Execution::new(strategy, setup)));
    let guard = rt::enter(exec.clone());
    simulate(model, run);
    drop(guard);
    let mut exec = Rc::try_unwrap(exec)
        .unwrap_or_else(|_| panic!("a model task outlived its run"))
        .into_inner();
    let outcome = match exec.end() {
        Some(End::Quiescent) => RunOutcome::Holds,
        Some(End::Violation(v)) => RunOutcome::Violation(v.clone()),
        Some(End::Divergence(d)) => RunOutcome::Diverged(d.clone()),
        Some(End::Pruned) => RunOutcome::Pruned,
        None => unreachable!("the root future returns only once the run has ended"),
    };
    let (recorded, labels) = exec.recorder_mut().take_schedule();
    let schedule = Schedule {
        recorded,
        names: exec.tasks.iter().map(|t| t.name.clone()).collect(),
        labels,
    };
    let result = RunResult {
        outcome,
        schedule,
        steps: exec.steps(),
        preemptions: exec.recorder_mut().preemptions(),
        interventions: exec.recorder_mut().take_interventions(),
        nodes: exec.node_count(),
        fault_sites: exec.faults().sites(),
        preempted_steps: exec.recorder_mut().take_preempted_steps(),
        tasks: exec.tasks.len(),
        digest: exec.digest(),
        end_state: exec.end_state(),
        accesses: exec.take_accesses(),
        spawned_at: exec.take_spawned_at(),
        pending: match config.record_accesses {
            true => exec
                .tasks
                .iter()
                .enumerate()
                .filter_map(|(i, t)| Some((i, t.state.parked_on()?.object()?)))
                .collect(),
            false => Vec::new(),
        },
        yielded_fairly: exec.fairness().ever_yielded(),
        used_time: exec.used_time(),
        trace: exec.recorder_mut().take_trace().map(|mut t| {
            t.hosts = exec.task_hosts();
            t
        }),
    };
    let mut strategy = exec.into_strategy();
    strategy.end_run(&result);
    (result, strategy)
}

/// How many runs one madsim runtime serves before it is dropped: a runtime keeps a record of
/// every task it ever spawned, so one runtime for a whole exploration would grow without bound.
#[cfg(madsim)]
const RUNS_PER_RUNTIME: u32 = 256;

#[cfg(madsim)]
thread_local! {
    /// This thread's madsim runtime and the runs it has served. Creating and dropping a runtime
    /// (simulators, node, clock, RNG) took a tenth of a short run. Reusing one cannot change a
    /// run: madsim decides nothing in it (only the baton holder is ever runnable, so madsim's
    /// RNG and clock are never consulted for an outcome), and every task has completed by the
    /// time `block_on` returns — checked, see `ModelTask`'s live count.
    static RUNTIME: RefCell<Option<(madsim::runtime::Runtime, u32)>> = const { RefCell::new(None) };
}

#[cfg(madsim)]
fn simulate(model: &dyn Model, run: u64) {
    // madsim's own seed does not matter: only the baton holder is ever runnable.
    let (runtime, served) = RUNTIME.with(|r| r.borrow_mut().take()).unwrap_or_else(|| {
        let config = madsim::Config::default();
        (
            madsim::runtime::Runtime::with_seed_and_config(run, config),
            0,
        )
    });
    runtime.block_on(async {
        let monitor = model.start();
        with_exec(|ex| ex.decide());
        RunEnd.await;
        let quiescent = with_exec(|ex| matches!(ex.end(), Some(End::Quiescent)));
        if quiescent {
            let watched = with_exec(|ex| ex.take_watched());
            let verdict = std::iter::once(&monitor)
                .chain(&watched)
                .find_map(|m| m.at_quiescence());
            drop(watched);
            if let Some(v) = verdict {
                with_exec(|ex| ex.fail_at_quiescence(v));
            }
        }
    });
    if served + 1 < RUNS_PER_RUNTIME && rt::model_task::live_tasks() == 0 {
        RUNTIME.with(|r| *r.borrow_mut() = Some((runtime, served + 1)));
    } else {
        // Dropping the runtime drops any task still parked while the execution is installed.
        drop(runtime);
    }
}

#[cfg(not(madsim))]
fn simulate(_model: &dyn Model, _run: u64) {
    panic!(
        "braid was built without --cfg madsim (an exported RUSTFLAGS replaces .cargo/config.toml)"
    );
}

/// Ready once the run has ended.
struct RunEnd;

impl Future for RunEnd {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        with_exec(|ex| {
            if ex.is_over() {
                Poll::Ready(())
            } else {
                ex.set_root_waker(cx.waker().clone());
                Poll::Pending
            }
        })
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
