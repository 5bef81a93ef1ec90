//! Runs one schedule: a fresh madsim runtime, the model's tasks, the baton, and the verdict.

use std::cell::RefCell;

use crate::model::Model;
use crate::rt::execution::{End, Execution, Setup};
use crate::rt::{self, with_exec};
use crate::strategy::{RunNeeds, Scheduler};
use crate::vocab::result::Schedule;
pub use crate::vocab::{describe_size, Access, AccessKind, RunOutcome, RunResult, StepAccesses};

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

/// What the run's execution is asked for by its model, its config and its strategy.
fn setup(model: &dyn Model, config: &RunConfig, needs: &RunNeeds) -> Setup {
    let clock_jumps = match needs.clock_jumps {
        true => model.clock_jumps(),
        false => 0,
    };
    Setup {
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
        members: match model.crashes() + model.network_faults() {
            0 => model.symmetric_members(),
            _ => Vec::new(),
        },
    }
}

/// Runs `model` once under `strategy` as run number `run`, and hands the strategy back.
pub fn run_once(
    model: &dyn Model,
    mut strategy: Box<dyn Scheduler>,
    run: u64,
    config: &RunConfig,
) -> (RunResult, Box<dyn Scheduler>) {
    rt::model_task::install_panic_hook();
    let needs = strategy.begin_run(run);
    let setup = setup(model, config, &needs);
    let exec = RefCell::new(Execution::new(strategy, setup));
    let guard = rt::enter(&exec);
    simulate(model, run);
    drop(guard);
    let mut exec = exec.into_inner();
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
        names: {
            let mut names = crate::rt::execution::spare::names();
            names.extend(exec.tasks.iter().map(|t| t.name.clone()));
            names
        },
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
        set_timers: exec.set_timers(),
        trace: exec.recorder_mut().take_trace().map(|mut t| {
            t.hosts = exec.task_hosts();
            t
        }),
    };
    let mut strategy = exec.into_strategy();
    strategy.end_run(&result);
    (result, strategy)
}

/// Gives a run's result back once it has been read: its lists are the next run's on this
/// thread, rather than allocated anew (the search's loop does, for every run it keeps nothing
/// of).
pub fn recycle(result: RunResult) {
    crate::rt::execution::spare::give_back(result);
}

/// How many runs one madsim runtime serves before it is dropped: a runtime keeps a record of
/// every task it ever ran (here, each run's root), so one runtime for a whole exploration
/// would grow without bound.
#[cfg(madsim)]
const RUNS_PER_RUNTIME: u32 = 256;

#[cfg(madsim)]
thread_local! {
    /// This thread's madsim runtime and the runs it has served. Creating and dropping a runtime
    /// (simulators, node, clock, RNG) took a tenth of a short run. Reusing one cannot change a
    /// run: madsim decides nothing in it (it runs one task, the run's root, which drives the
    /// model's tasks itself, so madsim's RNG and clock are never consulted for an outcome), and
    /// every model task's body has been dropped by the time `block_on` returns — checked, see
    /// `model_task::live_tasks`.
    static RUNTIME: RefCell<Option<(madsim::runtime::Runtime, u32)>> = const { RefCell::new(None) };
}

#[cfg(madsim)]
fn simulate(model: &dyn Model, run: u64) {
    // madsim's own seed does not matter: it runs one task, this run's root, which drives the
    // model's tasks itself.
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
        rt::model_task::drive(rt::run_id());
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
        // The tasks left are dropped after the verdict, in task order, within the runtime.
        rt::model_task::drop_left(rt::run_id());
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
