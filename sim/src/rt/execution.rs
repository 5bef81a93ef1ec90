//! The state of one run: tasks, objects, the baton, and the decisions taken so far.
//!
//! `Execution` owns its parts, each in its own file below `execution/` and changed only
//! through its methods: the clock and timers (`clock.rs`), the names handed out (`names.rs`),
//! the record of decisions, digest and trace (`recorder.rs`), nodes and their crashes
//! (`nodes.rs`), the fault budget (`faults.rs`), fairness (`fairness.rs`), how a blocked run
//! ends (`deadlock.rs`) and what tasks wait on (`waits.rs`), and what a run leaves the next
//! (`spare.rs`). Here: the tasks and objects, the baton, and `decide`, which hands the baton
//! on.

mod clock;
mod deadlock;
mod decide;
mod end;
mod fairness;
mod faults;
mod names;
mod nodes;
mod recorder;
pub(crate) mod spare;
mod waits;

use super::op::{ObjState, Object, Op};
use super::state::ValueState;
use super::step_bound::StepBound;
use super::symmetry::Symmetry;
use super::task::{Task, TaskState};
use crate::model::Grain;
use crate::strategy::Scheduler;
use crate::vocab::ObjId;
use crate::vocab::TaskId;
use crate::vocab::{AccessKind, StepAccesses};
use crate::{Divergence, Violation};
use clock::Clock;
use fairness::Fairness;
use faults::Faults;
use names::Names;
use nodes::Nodes;
use recorder::Recorder;
use spare::Spare;

/// How a run ended, as the executor sees it.
#[derive(Clone, Debug)]
pub(crate) enum End {
    /// No enabled task; every unfinished task sits in an idle wait.
    Quiescent,
    /// An invariant, a deadlock, a panic or the step bound.
    Violation(Violation),
    /// A replayed schedule did not fit the model.
    Divergence(Divergence),
    /// The strategy cut the run: it could only repeat an equivalent schedule.
    Pruned,
}

/// What a run's model and strategy ask of its execution (see `run_once`).
pub(crate) struct Setup {
    pub grain: Grain,
    pub max_steps: usize,
    pub trace: bool,
    /// Record each step's accesses (partial-order reduction).
    pub record_accesses: bool,
    /// Keep the run's state by value (strategies that search by state).
    pub value_state: bool,
    /// Tasks run on stacks of their own (`Model::stackful_tasks`).
    pub stackful: bool,
    /// A point parks where it is reached (`Model::one_point_per_poll`), not once its poll has
    /// returned.
    pub eager_points: bool,
    pub crashes: usize,
    pub faults: usize,
    pub clock_jumps: usize,
    /// The model's interchangeable tasks (`Model::symmetric_members`).
    pub members: Vec<usize>,
}

pub(crate) struct Execution {
    /// The tasks' records, by number. Open to the driver, the points and the primitives, each
    /// of which keeps its own fields of a task (its waker, its label, its token); the
    /// scheduling state (`Task::state`) changes here only.
    pub(crate) tasks: Vec<Task>,
    objects: Vec<Object>,
    /// The baton holder.
    current: Option<TaskId>,
    grain: Grain,
    steps: usize,
    /// Per step, the objects it accessed (recorded for partial-order reduction only).
    accesses: Option<StepAccesses>,
    /// The run's value state (kept only for strategies that search by state).
    values: Option<ValueState>,
    /// Per task, the step during which its parent spawned it (`None`: spawned by the setup).
    spawned_at: Vec<Option<usize>>,
    end: Option<End>,
    /// The task whose end ends the run, as a `#[test]` body's does (`sim::task::spawn_main`):
    /// once it has finished, the run is over and the tasks left are dropped.
    main: Option<TaskId>,
    /// Monitors registered during the run (`sim::watch`), judged at quiescence after the model's.
    watched: Vec<std::rc::Rc<dyn crate::model::Monitor>>,
    /// Task panics caught for a joiner that has not taken them yet (see
    /// `sim::task::panic_caught`), by number, with their messages.
    unobserved_panics: std::collections::BTreeMap<u64, String>,
    next_panic: u64,
    /// Tasks blocked on a waker: while none is, a decision reads no wake flag (`collect_wakes`
    /// is off the hot path of models that never block).
    blocked_tasks: usize,
    /// Where a run that does not end is cut, from its yields.
    bound: StepBound,
    /// The run has dependencies no reduction sees (a crash or fault budget):
    /// `Explorer` then searches without reduction.
    used_time: bool,
    /// Who holds each object a primitive said is held (see `waits.rs`): (object, task), in
    /// the order taken. Few at a time, so a list: a map allocated a node and a list per hold.
    holders: Vec<(usize, usize)>,
    /// State a library keeps per run (hosts, connections, disks), by type (see `sim::run_local`).
    run_locals: std::collections::BTreeMap<std::any::TypeId, std::rc::Rc<dyn std::any::Any>>,
    strategy: Box<dyn Scheduler>,
    /// The enabled tasks of the last decision (kept to reuse its allocation).
    enabled: Vec<TaskId>,
    /// The operation the running task asked to park on in its current slice, and the token of
    /// that request (see `rt::point::Point`).
    request: Option<(Op, u64)>,
    tokens: u64,
    stackful: bool,
    eager_points: bool,
    /// Whether the running task has parked at a point in its current slice (eager points).
    parked_in_slice: bool,
    /// The running task returned `Pending` to let the driver drop a crash's victims, keeping
    /// the baton.
    reschedule: bool,
    /// The task just granted the baton, until the driver resumes it once the slice that made
    /// the grant has ended (see `model_task::drive`).
    handoff: Option<TaskId>,
    clock: Clock,
    names: Names,
    recorder: Recorder,
    nodes: Nodes,
    faults: Faults,
    fairness: Fairness,
    /// The model's interchangeable tasks, and the renamings values are digested under.
    symmetry: Symmetry,
}

impl Execution {
    pub(crate) fn new(strategy: Box<dyn Scheduler>, setup: Setup) -> Self {
        let mut spare = Spare::take();
        let mut clock = Clock::default();
        clock.allow_jumps(setup.clock_jumps);
        let mut nodes = Nodes::default();
        nodes.allow_crashes(setup.crashes);
        let mut faults = Faults::default();
        faults.allow(setup.faults);
        let symmetry = Symmetry::new(setup.members);
        Execution {
            tasks: spare.tasks,
            objects: spare.objects,
            current: None,
            grain: setup.grain,
            steps: 0,
            accesses: setup.record_accesses.then(StepAccesses::default),
            values: setup.value_state.then(|| ValueState::new(&symmetry)),
            spawned_at: spare.spawned_at,
            end: None,
            main: None,
            watched: Vec::new(),
            unobserved_panics: std::collections::BTreeMap::new(),
            next_panic: 0,
            blocked_tasks: 0,
            bound: StepBound::new(setup.max_steps),
            used_time: false,
            holders: Vec::new(),
            run_locals: std::collections::BTreeMap::new(),
            strategy,
            enabled: spare.enabled,
            request: None,
            tokens: 0,
            stackful: setup.stackful,
            eager_points: setup.eager_points,
            parked_in_slice: false,
            reschedule: false,
            handoff: None,
            clock,
            names: Names::default(),
            recorder: Recorder::new(
                setup.trace,
                symmetry.lanes(),
                std::mem::take(&mut spare.decisions),
                std::mem::take(&mut spare.task_events),
            ),
            nodes,
            faults,
            fairness: Fairness::default(),
            symmetry,
        }
    }

    /// The task holding the baton, if any.
    pub(crate) fn current(&self) -> Option<TaskId> {
        self.current
    }

    pub(crate) fn grain(&self) -> Grain {
        self.grain
    }

    /// Whether tasks run on stacks of their own (`Model::stackful_tasks`).
    pub(crate) fn stackful(&self) -> bool {
        self.stackful
    }

    /// Whether a point parks where it is reached (`Model::one_point_per_poll`).
    pub(crate) fn eager_points(&self) -> bool {
        self.eager_points
    }

    /// Steps granted so far.
    pub(crate) fn steps(&self) -> usize {
        self.steps
    }

    pub(crate) fn end(&self) -> Option<&End> {
        self.end.as_ref()
    }

    pub(crate) fn is_over(&self) -> bool {
        self.end.is_some()
    }

    /// Whether the run keeps a trace.
    pub(crate) fn keeps_trace(&self) -> bool {
        self.recorder.keeps_trace()
    }

    /// The record of the run (to take what it recorded once the run is over).
    pub(crate) fn recorder_mut(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    /// The run's clock, to pause it or register its task (timers go through `add_timer`).
    pub(crate) fn clock_mut(&mut self) -> &mut Clock {
        &mut self.clock
    }

    pub(crate) fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    pub(crate) fn fairness(&self) -> &Fairness {
        &self.fairness
    }

    /// Whether the run has dependencies no reduction sees (see `used_time`).
    pub(crate) fn used_time(&self) -> bool {
        self.used_time
    }

    /// The run now has a dependency no reduction sees (a timer, a fault budget, a crash).
    pub(crate) fn set_used_time(&mut self) {
        self.used_time = true;
    }

    pub(crate) fn take_accesses(&mut self) -> StepAccesses {
        self.accesses.take().unwrap_or_default()
    }

    pub(crate) fn take_spawned_at(&mut self) -> Vec<Option<usize>> {
        std::mem::take(&mut self.spawned_at)
    }

    /// Registers a monitor judged at quiescence (`sim::watch`).
    pub(crate) fn watch(&mut self, monitor: std::rc::Rc<dyn crate::model::Monitor>) {
        self.watched.push(monitor);
    }

    pub(crate) fn take_watched(&mut self) -> Vec<std::rc::Rc<dyn crate::model::Monitor>> {
        std::mem::take(&mut self.watched)
    }

    /// This run's value of `T`, made on first use.
    pub(crate) fn run_local<T: Default + 'static>(&mut self) -> std::rc::Rc<T> {
        let any = self
            .run_locals
            .entry(std::any::TypeId::of::<T>())
            .or_insert_with(|| std::rc::Rc::new(T::default()))
            .clone();
        any.downcast::<T>()
            .unwrap_or_else(|_| unreachable!("keyed by its type"))
    }

    /// The running task asks to park on `op`: the first request of a slice is the one it parks
    /// on; a later one gets no token (its point asks again when next polled).
    pub(crate) fn request(&mut self, op: Op) -> Option<u64> {
        if self.request.is_some() {
            return None;
        }
        let token = self.next_token();
        self.request = Some((op, token));
        Some(token)
    }

    /// The request of the slice that just ended, taken: the next slice starts with none.
    pub(crate) fn take_request(&mut self) -> Option<(Op, u64)> {
        self.request.take()
    }

    /// A lazy point's request in this slice gives way to a synchronous point's.
    pub(crate) fn clear_request(&mut self) {
        self.request = None;
    }

    /// A fresh request token, for a point that parks where it is reached.
    pub(crate) fn next_token(&mut self) -> u64 {
        self.tokens += 1;
        self.tokens
    }

    /// A point dropped before its task parked on it: its request goes.
    pub(crate) fn withdraw(&mut self, token: u64) {
        if self.request.is_some_and(|(_, t)| t == token) {
            self.request = None;
        }
    }

    /// Whether the running task has parked at a point in its current slice.
    pub(crate) fn parked_in_slice(&self) -> bool {
        self.parked_in_slice
    }

    pub(crate) fn set_parked_in_slice(&mut self) {
        self.parked_in_slice = true;
    }

    /// Whether the slice that just ended parked at a point, clearing it.
    pub(crate) fn take_parked_in_slice(&mut self) -> bool {
        std::mem::take(&mut self.parked_in_slice)
    }

    /// The running task returns to the driver for a moment, keeping the baton (see `node`).
    pub(crate) fn reschedule(&mut self) {
        self.reschedule = true;
    }

    pub(crate) fn take_reschedule(&mut self) -> bool {
        std::mem::take(&mut self.reschedule)
    }

    /// `pick` holds the baton now and must be resumed, once the slice in progress has ended.
    pub(crate) fn hand_to(&mut self, pick: TaskId) {
        let earlier = self.handoff.replace(pick);
        debug_assert!(
            earlier.is_none_or(|e| e == pick),
            "two tasks granted the baton in one slice: {earlier:?} and {pick:?}"
        );
    }

    /// The task granted the baton and not yet resumed, taken.
    pub(crate) fn take_handoff(&mut self) -> Option<TaskId> {
        self.handoff.take()
    }

    /// Whether a mutex is held.
    pub(crate) fn is_held(&self, obj: ObjId) -> bool {
        matches!(
            self.objects[obj.0].state,
            ObjState::Mutex { owner: Some(_) }
        )
    }

    pub(crate) fn object_name(&self, obj: ObjId) -> &str {
        &self.objects[obj.0].name
    }

    pub(crate) fn into_strategy(mut self) -> Box<dyn Scheduler> {
        let (decisions, task_events) = self.recorder.take_lists();
        Spare {
            tasks: self.tasks,
            objects: self.objects,
            spawned_at: self.spawned_at,
            enabled: self.enabled,
            decisions,
            task_events,
        }
        .keep();
        self.strategy
    }

    pub(crate) fn digest(&self) -> u64 {
        self.recorder.digest()
    }

    /// One of the model's interchangeable members if `member` names one (see `rt::symmetry`).
    pub(crate) fn add_task(&mut self, name: &str, member: Option<usize>) -> TaskId {
        // Names are the identity of a task in replay files: keep them unique.
        let unique = self.names.unique(name, &self.tasks);
        self.tasks.push(Task {
            base_hash: crate::digest::of(names::base_name(&unique)),
            name: unique,
            state: TaskState::Parked(Op::Start),
            choice: 0,
            done: None,
            last_granted: None,
            fair_wait: None,
            yield_may_continue: false,
            continued_yield: false,
            skipping_yield: false,
            cancelled: false,
            wake_flag: None,
            wake_obj: None,
            parked_token: None,
            node: self.current.and_then(|t| self.tasks[t.0].node),
            daemon: false,
            dropped: false,
            label: None,
            waits_on: Vec::new(),
            poll: crate::rt::task::next_poll(),
        });
        let id = self.tasks.len() - 1;
        // The step the parent is taking (steps counts the steps granted so far).
        self.spawned_at
            .push(self.current.map(|_| self.steps.saturating_sub(1)));
        let parent = self.current.map(|t| t.0);
        match member {
            Some(m) => self.symmetry.spawned(m, id, parent.is_none()),
            None => self.symmetry.created_by(parent),
        }
        if let Some(values) = &mut self.values {
            values.spawn(id, parent, &self.symmetry);
        }
        TaskId(id)
    }

    /// `task`, just spawned, waits for its first grant on `op` instead of its start (a crash,
    /// a clock jump, a fault: each of its grants is one).
    pub(crate) fn first_waits_on(&mut self, task: TaskId, op: Op) {
        self.tasks[task.0].state = TaskState::Parked(op);
    }

    /// The running task's future returned `Pending` without parking: it waits for its waker.
    pub(crate) fn block_current(&mut self) {
        let me = self.current.expect("a running task blocks");
        let obj = match self.tasks[me.0].wake_obj {
            Some(o) => o,
            None => {
                let name = Names::wake_up(&self.tasks[me.0].name);
                let o = self.add_object(name, ObjState::Wake { woken: false });
                self.tasks[me.0].wake_obj = Some(o);
                o
            }
        };
        self.tasks[me.0].state = TaskState::Parked(Op::Blocked(obj));
        self.blocked_tasks += 1;
        self.decide();
    }

    /// Makes `task` the one whose end ends the run.
    pub(crate) fn set_main(&mut self, task: TaskId) {
        self.main = Some(task);
    }

    /// Gives `task` an object that its end writes, for others to join on.
    pub(crate) fn make_joinable(&mut self, task: TaskId) -> ObjId {
        let name = self.tasks[task.0].name.clone();
        let done = self.add_object(name.into(), ObjState::Task { finished: false });
        self.tasks[task.0].done = Some(done);
        done
    }

    /// Names for an unnamed object of this kind and its parts: `mutex#1`, `mutex#2`, ...
    pub(crate) fn auto_names<const K: usize>(
        &mut self,
        kind: &'static str,
        suffixes: [&'static str; K],
    ) -> [crate::Name; K] {
        Names::auto_names(kind, suffixes)
    }

    pub(crate) fn add_object(&mut self, name: crate::Name, state: ObjState) -> ObjId {
        self.symmetry.created_by(self.current.map(|t| t.0));
        self.objects.push(Object { name, state });
        ObjId(self.objects.len() - 1)
    }

    /// The object's scheduling state, to change it (a write access by the current step).
    pub(crate) fn state_mut(&mut self, obj: ObjId) -> &mut ObjState {
        self.access(obj, AccessKind::Write);
        &mut self.objects[obj.0].state
    }

    /// The object's scheduling state, to change it with an update that commutes with the
    /// object's other commuting updates (see `AccessKind::Commuting`).
    pub(crate) fn state_commuting(&mut self, obj: ObjId) -> &mut ObjState {
        self.access(obj, AccessKind::Commuting);
        &mut self.objects[obj.0].state
    }

    /// Records that the current step accesses `obj`.
    pub(crate) fn access(&mut self, obj: ObjId, kind: AccessKind) {
        self.unwind_if_running_on();
        if let Some(steps) = &mut self.accesses {
            steps.record(obj, kind);
        }
    }

    /// The running task learns something with this digest (a value loaded, a message received,
    /// whether a channel was full): its future may depend on it.
    pub(crate) fn observe(&mut self, digest: impl Fn() -> u64) {
        self.unwind_if_running_on();
        if let (Some(values), Some(task)) = (&mut self.values, self.current) {
            values.observe(task.0, &self.symmetry, digest);
        }
    }

    /// A task finished after the run (see `rt::coroutine`) that reaches an access ran on past
    /// the point its poll was to return at (a ready future not braid's, in the futures crate's
    /// `select`): it is unwound there, so that nothing of the run changes after its end.
    #[inline]
    fn unwind_if_running_on(&self) {
        if self.end.is_some() && super::coroutine::finishing() {
            super::coroutine::abandon_here();
        }
    }

    /// The running task may read all of `obj`'s value (a lock's contents).
    pub(crate) fn observe_value(&mut self, obj: ObjId) {
        self.unwind_if_running_on();
        if let (Some(values), Some(task)) = (&mut self.values, self.current) {
            values.observe_value(task.0, obj.0);
        }
    }

    /// Whether the run keeps object values (see `ValueState`): a primitive that changes its
    /// value then reports the new one.
    pub(crate) fn tracks_values(&self) -> bool {
        self.values.is_some()
    }

    /// `obj`'s value is now the one with this digest (computed under each of the symmetry's
    /// renamings: see `rt::symmetry`).
    pub(crate) fn set_value(&mut self, obj: ObjId, digest: impl Fn() -> u64) {
        if let Some(values) = &mut self.values {
            values.set_value(obj.0, &self.symmetry, digest);
        }
    }

    /// `obj`'s value grew by one element with this digest.
    pub(crate) fn append_value(&mut self, obj: ObjId, digest: impl Fn() -> u64) {
        if let Some(values) = &mut self.values {
            values.append_value(obj.0, &self.symmetry, digest);
        }
    }

    /// The running task declares its whole local state (see `sim::checkpoint`).
    pub(crate) fn checkpoint(&mut self, locals: impl Fn() -> u64) {
        if let (Some(values), Some(task)) = (&mut self.values, self.current) {
            values.checkpoint(task.0, &self.symmetry, locals);
        }
    }

    pub(crate) fn current_name(&self) -> &str {
        self.current.map_or("root", |t| &*self.tasks[t.0].name)
    }

    /// A value in `0..n` the strategy picks within the running task's step, without parking
    /// it (a crash deciding what became of each unsynced write). Recorded as a `choose`.
    pub(crate) fn draw(&mut self, n: usize, what: std::sync::Arc<str>) -> usize {
        if self.end.is_some() {
            return 0;
        }
        match self.strategy.pick_value(self.steps.saturating_sub(1), n) {
            Ok(v) => {
                if let (Some(values), Some(me)) = (&mut self.values, self.current) {
                    values.chose(me.0, v);
                }
                self.recorder.drew(v, what);
                v
            }
            Err(stop) => {
                self.stop(stop);
                0
            }
        }
    }

    /// The running task parks on `op`; the strategy picks who runs next.
    pub(crate) fn park_current(&mut self, op: Op) -> TaskId {
        let me = self
            .current
            .expect("scheduling point reached outside a model task (spawn one with sim::spawn)");
        self.tasks[me.0].state = TaskState::Parked(op);
        if op == Op::YieldNow {
            self.fairness.yielded();
            self.bound.yielded(self.steps);
        }
        self.decide();
        me
    }
}
