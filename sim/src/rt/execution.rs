//! The state of one run: tasks, objects, the baton, and the decisions taken so far.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt::Write as _;
use std::hash::Hasher;
use std::task::Waker;

use super::access::{AccessKind, StepAccesses};
use super::digest::Digest;
use super::op::{Describe, ObjId, ObjState, Object, Op};
use super::state::ValueState;
use super::step_bound::StepBound;
use super::task::{Task, TaskId};
use crate::model::Grain;
use crate::strategy::{PickView, Stop, Strategy};
use crate::trace::{Mark, Trace, TraceLine, Wait};
use crate::{Divergence, Violation};

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

/// A decision as recorded during the run, by task number; named only when asked for (see
/// `RunResult::decisions`). Two words' worth of them fit a small allocation per run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Recorded {
    Task(u32),
    Choice(u32),
}

impl Recorded {
    fn task(t: TaskId) -> Self {
        Recorded::Task(u32::try_from(t.0).expect("fewer than 2^32 tasks"))
    }

    fn choice(v: usize) -> Self {
        Recorded::Choice(u32::try_from(v).expect("a choose value below 2^32"))
    }
}

thread_local! {
    /// How many tasks and objects the last run on this thread had (see `Execution::new`). A
    /// capacity only: nothing a run does depends on it.
    static LAST_RUN_SIZES: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// What a node's crash does besides killing its tasks, given the node's name.
pub(crate) type CrashHook = std::rc::Rc<dyn Fn(&str)>;

pub(crate) struct Execution {
    pub tasks: Vec<Task>,
    pub objects: Vec<Object>,
    /// The baton holder.
    pub current: Option<TaskId>,
    pub grain: Grain,
    pub steps: usize,
    pub preempted_steps: Vec<usize>,
    pub decisions: Vec<Recorded>,
    pub trace: Option<Trace>,
    /// Per step, the objects it accessed (recorded for partial-order reduction only).
    pub accesses: Option<StepAccesses>,
    /// The run's value state (kept only for strategies that search by state).
    values: Option<ValueState>,
    /// Per task, a hash of the events it emitted, in order: equal for equivalent schedules.
    pub task_events: Vec<u64>,
    /// Per task, the step during which its parent spawned it (`None`: spawned by the setup).
    pub spawned_at: Vec<Option<usize>>,
    /// Task names taken (kept as a set once a run has many tasks: below that a scan is
    /// cheaper than the set), and per name the last `#n` suffix given to a namesake.
    task_names: Option<std::collections::HashSet<String>>,
    namesakes: std::collections::HashMap<String, usize>,
    pub end: Option<End>,
    /// The task whose end ends the run, as a `#[test]` body's does (`sim::task::spawn_main`):
    /// once it has finished, the run is over and the tasks left are dropped.
    main: Option<TaskId>,
    /// Monitors registered during the run (`sim::watch`), judged at quiescence after the model's.
    pub watched: Vec<std::rc::Rc<dyn crate::model::Monitor>>,
    /// Task panics caught for a joiner that has not taken them yet (see
    /// `sim::task::panic_caught`), by number, with their messages.
    pub unobserved_panics: std::collections::BTreeMap<u64, String>,
    next_panic: u64,
    /// Tasks parked in a fair yield (see `fair`).
    pub fair_yields: usize,
    /// Tasks blocked on a waker: while none is, a decision reads no wake flag (`collect_wakes`
    /// is off the hot path of models that never block).
    blocked_tasks: usize,
    /// Whether any task yielded fairly in this run (its schedules are then the fair ones).
    pub yielded_fairly: bool,
    /// Where a run that does not end is cut, from its yields.
    bound: StepBound,
    /// Virtual time since the run began, and the timers pending, by deadline then creation
    /// (see `sim::time`): time moves only when no task can, to the next deadline.
    pub now: std::time::Duration,
    timers: std::collections::BTreeMap<(std::time::Duration, u64), Waker>,
    timer_seq: u64,
    /// The run set a timer: reductions do not see time's dependencies (`Explorer` then
    /// searches without them).
    pub used_time: bool,
    /// Who holds each object a primitive said is held (see `rt::waits`), by object.
    pub(crate) holders: std::collections::BTreeMap<usize, Vec<usize>>,
    /// Per kind of object, the last number given to an unnamed one (`mutex#3`).
    auto_names: std::collections::BTreeMap<&'static str, usize>,
    strategy: Box<dyn Strategy>,
    digest: Digest,
    root_waker: Option<Waker>,
    enabled: Vec<TaskId>,
    /// The operation the running task asked to park on in its current slice, and the token of
    /// that request (see `rt::task::Point`).
    pub request: Option<(Op, u64)>,
    tokens: u64,
    /// Tasks run on stacks of their own (`Model::stackful_tasks`).
    pub stackful: bool,
    /// A point parks where it is reached (`Model::one_point_per_poll`), not once its poll has
    /// returned; and whether the running task has so parked in its current slice.
    pub eager_points: bool,
    pub parked_in_slice: bool,
    /// Nodes (name, object), the crashes the run may still decide, and the tasks the last
    /// crash killed (see `node`).
    nodes: Vec<(String, ObjId)>,
    pub crashes_left: usize,
    /// How many more faults (resets, partitions, datagram losses) the run may inject at its
    /// fault sites (see `sim::fault`).
    pub faults_left: usize,
    /// The strategy's interventions so far, each its step and kind ("crash", "reset",
    /// "partition", "clock jump"): each also counts as a preemption.
    pub interventions: Vec<(usize, String)>,
    /// What each value drawn within a step decided, by its index among the decisions.
    pub draw_labels: std::collections::BTreeMap<usize, std::sync::Arc<str>>,
    /// Fault sites started in the run (see `sim::fault`).
    pub fault_sites: usize,
    /// What a node's crash does besides killing its tasks (its connections reset, its unsynced
    /// writes decided), in the order registered (see `node::on_crash`).
    pub crash_hooks: Vec<CrashHook>,
    /// State a library keeps per run (hosts, connections, disks), by type (see `sim::run_local`).
    run_locals: std::collections::BTreeMap<std::any::TypeId, std::rc::Rc<dyn std::any::Any>>,
    /// How many more times virtual time may jump ahead of a task that can still run.
    pub clock_jumps_left: usize,
    /// The task whose steps are clock jumps, once a timer exists (see `time::start_clock`).
    pub clock_task: Option<TaskId>,
    /// The run paused its clock (`sim::time::pause`): no jumps while tasks can run.
    pub clock_paused: bool,
    victims: Vec<TaskId>,
    /// The running task returned `Pending` to let the runtime drop a crash's victims, keeping
    /// the baton.
    pub reschedule: bool,
}

impl Execution {
    pub(crate) fn new(
        strategy: Box<dyn Strategy>,
        grain: Grain,
        max_steps: usize,
        trace: bool,
        record_accesses: bool,
    ) -> Self {
        // Sized as the last run on this thread was: runs of one model are alike, so the task
        // and object lists are allocated once instead of grown step by step.
        let (tasks, objects) = LAST_RUN_SIZES.with(Cell::get);
        Execution {
            tasks: Vec::with_capacity(tasks),
            objects: Vec::with_capacity(objects),
            current: None,
            grain,
            steps: 0,
            preempted_steps: Vec::with_capacity(64),
            // Sized for a typical run, so that recording a step seldom reallocates.
            decisions: Vec::with_capacity(128),
            trace: trace.then(Trace::default),
            accesses: record_accesses.then(StepAccesses::default),
            values: strategy.wants_value_state().then(ValueState::default),
            task_events: Vec::with_capacity(8),
            spawned_at: Vec::with_capacity(8),
            task_names: None,
            namesakes: std::collections::HashMap::new(),
            end: None,
            main: None,
            watched: Vec::new(),
            unobserved_panics: std::collections::BTreeMap::new(),
            next_panic: 0,
            fair_yields: 0,
            blocked_tasks: 0,
            yielded_fairly: false,
            now: std::time::Duration::ZERO,
            timers: std::collections::BTreeMap::new(),
            timer_seq: 0,
            used_time: false,
            holders: std::collections::BTreeMap::new(),
            auto_names: std::collections::BTreeMap::new(),
            strategy,
            bound: StepBound::new(max_steps),
            digest: Digest::default(),
            root_waker: None,
            enabled: Vec::with_capacity(8),
            request: None,
            tokens: 0,
            stackful: false,
            eager_points: false,
            parked_in_slice: false,
            nodes: Vec::new(),
            crashes_left: 0,
            faults_left: 0,
            interventions: Vec::new(),
            fault_sites: 0,
            draw_labels: std::collections::BTreeMap::new(),
            crash_hooks: Vec::new(),
            run_locals: std::collections::BTreeMap::new(),
            clock_jumps_left: 0,
            clock_task: None,
            clock_paused: false,
            victims: Vec::new(),
            reschedule: false,
        }
    }

    pub(crate) fn add_node(&mut self, name: String, obj: ObjId) -> usize {
        // A crash depends on every step of its node's tasks, which no reduction sees: runs
        // that may crash a node are searched without reduction, as timed runs are.
        if self.crashes_left > 0 {
            self.used_time = true;
        }
        self.nodes.push((name, obj));
        self.nodes.len() - 1
    }

    pub(crate) fn node_object(&self, node: usize) -> ObjId {
        self.nodes[node].1
    }

    pub(crate) fn join_node(&mut self, task: TaskId, node: usize) {
        self.tasks[task.0].node = Some(node);
    }

    /// Per task that belongs to a node, the node's name; per daemon (a delivery, a fault
    /// site), `NETWORK_LANES` (for the pictures' host groups).
    pub(crate) fn task_hosts(&self) -> std::collections::BTreeMap<String, String> {
        self.tasks
            .iter()
            .filter_map(|t| {
                let host = match (t.node, t.daemon) {
                    (Some(n), _) => self.nodes[n].0.clone(),
                    (None, true) => crate::trace::NETWORK_LANES.to_string(),
                    (None, false) => return None,
                };
                Some((t.name.to_string(), host))
            })
            .collect()
    }

    /// How many nodes started.
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes' names, in the order they started.
    pub(crate) fn node_names(&self) -> Vec<String> {
        self.nodes.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The name of the node `task` belongs to, if any.
    pub(crate) fn node_of(&self, task: TaskId) -> Option<&str> {
        self.tasks[task.0].node.map(|n| self.nodes[n].0.as_str())
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

    fn node_up(&self, node: usize) -> bool {
        self.tasks
            .iter()
            .any(|t| t.node == Some(node) && !t.finished)
    }

    /// Kills every task of `node`: each stops where it is parked, its locks are released and
    /// its join fails; the runtime drops its future.
    pub(crate) fn crash_node(&mut self, node: usize) {
        self.crashes_left -= 1;
        let mut killed = Vec::new();
        for i in 0..self.tasks.len() {
            let task = &mut self.tasks[i];
            if task.node != Some(node) || task.finished {
                continue;
            }
            task.finished = true;
            task.killed = true;
            task.fair_wait = None;
            match task.pending.take() {
                Some(Op::Blocked(_)) => self.blocked_tasks -= 1,
                Some(Op::YieldNow) => self.fair_yields -= 1,
                _ => {}
            }
            if let Some(w) = &task.waker {
                w.wake_by_ref();
            }
            killed.push(task.name.to_string());
            if let Some(done) = task.done {
                *self.state_mut(done) = ObjState::Task { finished: true };
            }
            for o in 0..self.objects.len() {
                match self.objects[o].state {
                    ObjState::Mutex { owner: Some(t) } if t == i => {
                        *self.state_mut(ObjId(o)) = ObjState::Mutex { owner: None };
                    }
                    ObjState::RwLock {
                        readers,
                        writer: Some(t),
                    } if t == i => {
                        *self.state_mut(ObjId(o)) = ObjState::RwLock {
                            readers,
                            writer: None,
                        };
                    }
                    _ => {}
                }
            }
            self.victims.push(TaskId(i));
        }
        self.note_effect(|| format!("killed {}", killed.join(", ")));
    }

    /// The tasks the last crash killed whose futures the runtime has not dropped yet.
    pub(crate) fn victims_alive(&mut self) -> usize {
        let tasks = &self.tasks;
        self.victims.retain(|t| !tasks[t.0].dropped);
        self.victims.len()
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

    /// Whether a mutex is held.
    pub(crate) fn is_held(&self, obj: ObjId) -> bool {
        matches!(
            self.objects[obj.0].state,
            ObjState::Mutex { owner: Some(_) }
        )
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

    pub(crate) fn into_strategy(self) -> Box<dyn Strategy> {
        LAST_RUN_SIZES.with(|sizes| sizes.set((self.tasks.len(), self.objects.len())));
        self.strategy
    }

    pub(crate) fn digest(&self) -> u64 {
        self.digest.finish()
    }

    pub(crate) fn is_over(&self) -> bool {
        self.end.is_some()
    }

    pub(crate) fn add_task(&mut self, name: String) -> TaskId {
        // Names are the identity of a task in replay files: keep them unique. A set of the
        // names taken and, per name, the last suffix handed out keep a spawn O(1) however many
        // tasks a run has (lookups only: no iteration order reaches the run).
        let mut unique = name;
        if self.name_taken(&unique) {
            let base = std::mem::take(&mut unique);
            let mut n = self.namesakes.get(base.as_str()).copied().unwrap_or(1);
            loop {
                n += 1;
                unique = format!("{base}#{n}");
                if !self.name_taken(&unique) {
                    break;
                }
            }
            self.namesakes.insert(base, n);
        }
        if let Some(names) = &mut self.task_names {
            names.insert(unique.clone());
        }
        self.tasks.push(Task {
            base_hash: super::digest::of(base_name(&unique)),
            name: unique.into(),
            pending: Some(Op::Start),
            finished: false,
            granted: false,
            waker: None,
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
            blocked: false,
            parked_token: None,
            node: self.current.and_then(|t| self.tasks[t.0].node),
            killed: false,
            daemon: false,
            dropped: false,
            label: None,
            waits_on: Vec::new(),
        });
        let id = self.tasks.len() - 1;
        // The step the parent is taking (steps counts the steps granted so far).
        self.spawned_at
            .push(self.current.map(|_| self.steps.saturating_sub(1)));
        if let Some(values) = &mut self.values {
            values.spawn(id, self.current.map(|t| t.0));
        }
        TaskId(id)
    }

    /// The running task's future returned `Pending` without parking: it waits for its waker.
    pub(crate) fn block_current(&mut self) {
        let me = self.current.expect("a running task blocks");
        let obj = match self.tasks[me.0].wake_obj {
            Some(o) => o,
            None => {
                let name = format!("{}'s wake-up", self.tasks[me.0].name);
                let o = self.add_object(name.into(), ObjState::Wake { woken: false });
                self.tasks[me.0].wake_obj = Some(o);
                o
            }
        };
        let task = &mut self.tasks[me.0];
        task.pending = Some(Op::Blocked(obj));
        task.blocked = true;
        self.blocked_tasks += 1;
        self.decide();
    }

    /// Notes the wakers called since the last decision: a blocked task whose flag is set can
    /// go on. The wake is the last step's doing (a write of the task's wake-up), or time's.
    fn collect_wakes(&mut self) {
        for i in 0..self.tasks.len() {
            let task = &self.tasks[i];
            let (Some(Op::Blocked(obj)), Some(flag)) = (task.pending, &task.wake_flag) else {
                continue;
            };
            if flag.is_set() && matches!(self.objects[obj.0].state, ObjState::Wake { woken: false })
            {
                *self.state_mut(obj) = ObjState::Wake { woken: true };
            }
        }
    }

    /// Registers a timer at `deadline` (virtual) that wakes `waker`; returns its key.
    pub(crate) fn add_timer(
        &mut self,
        deadline: std::time::Duration,
        waker: Waker,
    ) -> (std::time::Duration, u64) {
        self.used_time = true;
        self.timer_seq += 1;
        let key = (deadline, self.timer_seq);
        self.timers.insert(key, waker);
        key
    }

    /// Replaces the waker of a pending timer (a future polled from another context).
    pub(crate) fn update_timer(&mut self, key: (std::time::Duration, u64), waker: &Waker) {
        if let Some(w) = self.timers.get_mut(&key) {
            if !w.will_wake(waker) {
                *w = waker.clone();
            }
        }
    }

    /// Whether the timer `key` is still waiting to fire.
    pub(crate) fn timer_pending(&self, key: (std::time::Duration, u64)) -> bool {
        self.timers.contains_key(&key)
    }

    pub(crate) fn cancel_timer(&mut self, key: (std::time::Duration, u64)) {
        self.timers.remove(&key);
    }

    /// No task can move: time jumps to the next deadline and every timer due then fires (their
    /// tasks become able to move together, and the strategy picks who goes first). False when
    /// no timer is pending.
    fn advance_time(&mut self) -> bool {
        let Some((&(deadline, _), _)) = self.timers.first_key_value() else {
            return false;
        };
        self.now = deadline;
        let mut due = Vec::new();
        while self
            .timers
            .first_key_value()
            .is_some_and(|((d, _), _)| *d == deadline)
        {
            due.extend(self.timers.pop_first());
        }
        self.digest.write_u64(0x7157 ^ deadline.as_nanos() as u64);
        let step = self.steps;
        if let Some(trace) = &mut self.trace {
            trace.lines.push(TraceLine::Event {
                step,
                task: "clock".to_string(),
                text: format!("time advances to {deadline:?}: {} timer(s) fire", due.len()),
            });
        }
        for (_, waker) in due {
            waker.wake();
        }
        true
    }

    /// Makes `task` the one whose end ends the run.
    pub(crate) fn set_main(&mut self, task: TaskId) {
        self.main = Some(task);
    }

    /// Gives `task` an object that its end writes, for others to join on.
    pub(crate) fn make_joinable(&mut self, task: TaskId) -> ObjId {
        let name = self.tasks[task.0].name.to_string();
        let done = self.add_object(name.into(), ObjState::Task { finished: false });
        self.tasks[task.0].done = Some(done);
        done
    }

    /// A name for an unnamed object of this kind: `mutex#1`, `mutex#2`, ...
    pub(crate) fn auto_name(&mut self, kind: &'static str) -> String {
        let n = self.auto_names.entry(kind).or_insert(0);
        *n += 1;
        format!("{kind}#{n}")
    }

    /// Whether a task already has this name.
    fn name_taken(&mut self, name: &str) -> bool {
        const SCAN: usize = 32;
        if self.task_names.is_none() && self.tasks.len() > SCAN {
            self.task_names = Some(self.tasks.iter().map(|t| t.name.to_string()).collect());
        }
        match &self.task_names {
            Some(names) => names.contains(name),
            None => self.tasks.iter().any(|t| *t.name == *name),
        }
    }

    pub(crate) fn add_object(&mut self, name: Cow<'static, str>, state: ObjState) -> ObjId {
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
        if let Some(steps) = &mut self.accesses {
            steps.record(obj, kind);
        }
    }

    /// The running task learns something with this digest (a value loaded, a message received,
    /// whether a channel was full): its future may depend on it.
    pub(crate) fn observe(&mut self, digest: u64) {
        if let (Some(values), Some(task)) = (&mut self.values, self.current) {
            values.observe(task.0, digest);
        }
    }

    /// The running task may read all of `obj`'s value (a lock's contents).
    pub(crate) fn observe_value(&mut self, obj: ObjId) {
        if let (Some(values), Some(task)) = (&mut self.values, self.current) {
            values.observe_value(task.0, obj.0);
        }
    }

    /// Whether the run keeps object values (see `ValueState`): a primitive that changes its
    /// value then reports the new one.
    pub(crate) fn tracks_values(&self) -> bool {
        self.values.is_some()
    }

    /// `obj`'s value is now the one with this digest.
    pub(crate) fn set_value(&mut self, obj: ObjId, digest: u64) {
        if let Some(values) = &mut self.values {
            values.set_value(obj.0, digest);
        }
    }

    /// `obj`'s value grew by one element with this digest.
    pub(crate) fn append_value(&mut self, obj: ObjId, digest: u64) {
        if let Some(values) = &mut self.values {
            values.append_value(obj.0, digest);
        }
    }

    /// The running task declares its whole local state (see `sim::checkpoint`).
    pub(crate) fn checkpoint(&mut self, locals: u64) {
        if let (Some(values), Some(task)) = (&mut self.values, self.current) {
            values.checkpoint(task.0, locals);
        }
    }

    pub(crate) fn current_name(&self) -> &str {
        self.current.map_or("root", |t| &*self.tasks[t.0].name)
    }

    /// Hashes a model event into the run's digest and its task's event sequence.
    pub(crate) fn digest_event(&mut self, hash: u64) {
        self.digest.write_u64(hash);
        let slot = self.current.map_or(0, |t| t.0 + 1);
        if self.task_events.len() <= slot {
            self.task_events.resize(slot + 1, 0);
        }
        let mut h = Digest::default();
        h.write_u64(self.task_events[slot]);
        h.write_u64(hash);
        self.task_events[slot] = h.finish();
    }

    /// A hash of every task's event sequence: schedules that differ only in the order of
    /// independent steps have the same end state. Tasks count by name, not by number, and
    /// without the suffix that tells namesakes apart (`handler#2`): two tasks spawning in
    /// either order only swap their children's numbers and suffixes.
    pub(crate) fn end_state(&self) -> u64 {
        let setup = self.task_events.first().copied().unwrap_or(0);
        let tasks = self.tasks.iter().enumerate().map(|(i, t)| {
            let events = self.task_events.get(i + 1).copied().unwrap_or(0);
            super::digest::mix(t.base_hash, events)
        });
        let sum = tasks.fold(0u64, |sum, t| sum.wrapping_add(t));
        super::digest::mix(setup, sum)
    }

    /// Attaches an effect ("acquired", "Full", "popped p1#1") to the last step, when tracing.
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
                self.draw_labels.insert(self.decisions.len(), what);
                self.decisions.push(Recorded::choice(v));
                self.digest.write_usize(v);
                v
            }
            Err(stop) => {
                self.stop(stop);
                0
            }
        }
    }

    pub(crate) fn note_effect(&mut self, effect: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            if let Some(TraceLine::Step { effect: slot, .. }) = trace.lines.last_mut() {
                *slot = Some(effect());
            }
        }
    }

    pub(crate) fn trace_event(&mut self, text: impl FnOnce() -> String) {
        if self.trace.is_none() {
            return;
        }
        let task = self.current_name().to_string();
        let step = self.steps;
        if let Some(trace) = &mut self.trace {
            trace.lines.push(TraceLine::Event {
                step,
                task,
                text: text(),
            });
        }
    }

    /// Records a model's mark (see `sim::mark`) when tracing and the run goes on: no digest,
    /// no access, no step. Whether it was recorded.
    pub(crate) fn trace_mark(&mut self, mark: Mark, name: impl FnOnce() -> String) -> bool {
        if self.trace.is_none() || self.is_over() {
            return false;
        }
        let task = self.current_name().to_string();
        let step = self.steps;
        if let Some(trace) = &mut self.trace {
            trace.lines.push(TraceLine::Mark {
                step,
                task,
                mark,
                name: name(),
            });
        }
        true
    }

    /// The keys of the frames the violation being recorded concerns, when tracing.
    pub(crate) fn trace_about(&mut self, about: impl FnOnce() -> Vec<String>) {
        if let Some(trace) = &mut self.trace {
            trace.about = about();
        }
    }

    pub(crate) fn set_root_waker(&mut self, waker: Waker) {
        self.root_waker = Some(waker);
    }

    /// Ends the run. Parked tasks stay parked; the root future completes.
    pub(crate) fn finish(&mut self, end: End) {
        if self.end.is_some() {
            return;
        }
        let end = self.blame_unobserved_panic(end);
        if let Some(trace) = &mut self.trace {
            let text = match &end {
                End::Quiescent => "quiescent: no task can run and none is stuck".to_string(),
                End::Violation(v) => format!("violation {}: {}", v.invariant, v.message),
                End::Divergence(d) => d.to_string(),
                End::Pruned => "pruned: equivalent to a schedule already explored".to_string(),
            };
            trace.lines.push(TraceLine::End {
                step: self.steps,
                text,
            });
        }
        self.end = Some(end);
        self.current = None;
        if let Some(w) = self.root_waker.take() {
            w.wake();
        }
        // Wake every parked task so that it completes (see `ModelTask`) before the runtime
        // goes: madsim polls them all before it returns from block_on.
        for task in self.tasks.iter_mut().filter(|t| !t.finished) {
            if let Some(w) = task.waker.take() {
                w.wake();
            }
        }
    }

    pub(crate) fn violate(&mut self, invariant: &str, message: String) {
        let step = self.steps;
        self.finish(End::Violation(Violation {
            invariant: invariant.to_string(),
            message,
            step,
        }));
    }

    /// A task panic caught for its joiner: its number, to say when the joiner takes it.
    pub(crate) fn panic_caught(&mut self, message: String) -> u64 {
        self.next_panic += 1;
        self.unobserved_panics.insert(self.next_panic, message);
        self.next_panic
    }

    /// A run that ends with a task's panic nobody took (quiescent, or stuck because of it)
    /// fails with that panic: the root cause, before the deadlock or the end it led to.
    /// (tokio would only print it; braid is stricter, and says so.)
    fn blame_unobserved_panic(&mut self, end: End) -> End {
        let Some(panic) = self.unobserved_panics.values().next() else {
            return end;
        };
        let after = match &end {
            End::Quiescent => "the run ended without anyone taking it".to_string(),
            End::Violation(v)
                if matches!(&*v.invariant, "deadlock" | "livelock" | "step-bound") =>
            {
                format!("the run then ended in {}: {}", v.invariant, v.message)
            }
            _ => return end,
        };
        End::Violation(Violation {
            invariant: "panic".to_string(),
            message: format!(
                "{panic}; nobody observed it through its JoinHandle, and {after} (tokio would \
                 only print the panic; braid fails the run)"
            ),
            step: self.steps,
        })
    }

    /// The running task parks on `op`; the strategy picks who runs next.
    pub(crate) fn park_current(&mut self, op: Op) -> TaskId {
        let me = self
            .current
            .expect("scheduling point reached outside a model task (spawn one with sim::spawn)");
        self.tasks[me.0].pending = Some(op);
        if op == Op::YieldNow {
            self.fair_yields += 1;
            self.yielded_fairly = true;
            self.bound.yielded(self.steps);
        }
        self.decide();
        me
    }

    pub(crate) fn task_finished(&mut self, id: TaskId) {
        self.tasks[id.0].finished = true;
        self.tasks[id.0].pending = None;
        if let Some(done) = self.tasks[id.0].done {
            // The end is the task's last step's write: a join depends on it.
            *self.state_mut(done) = ObjState::Task { finished: true };
            self.set_value(done, 1);
        }
        if self.main == Some(id) {
            // As tokio's runtime drops every task left when a `#[tokio::test]` body returns
            // (its default runtime polls nothing after that): they take no more steps, so an
            // endless background loop is neither a livelock nor a deadlock.
            self.finish(End::Quiescent);
            if let Some(trace) = &mut self.trace {
                if let Some(TraceLine::End { text, .. }) = trace.lines.last_mut() {
                    *text = "the main task returned: the tasks left are dropped".to_string();
                }
            }
            return;
        }
        self.decide();
    }

    pub(crate) fn task_panicked(&mut self, id: TaskId, message: String) {
        self.tasks[id.0].finished = true;
        let name = &self.tasks[id.0].name;
        let message = format!("task {name} panicked: {message}");
        self.violate("panic", message);
    }

    #[inline]
    fn enabled(&self, task: &Task) -> bool {
        match task.pending {
            Some(op) if !task.finished => {
                op.object().is_none_or(|obj| self.objects[obj.0].allows(op))
            }
            _ => false,
        }
    }

    /// Grants the baton to the task the strategy picks, or ends the run when nobody can run.
    pub(crate) fn decide(&mut self) {
        if self.end.is_some() {
            return;
        }
        let prev = self.current.take();
        let mut enabled = std::mem::take(&mut self.enabled);
        loop {
            if self.blocked_tasks > 0 {
                self.collect_wakes();
            }
            enabled.clear();
            for (i, task) in self.tasks.iter().enumerate() {
                if self.enabled(task) {
                    enabled.push(TaskId(i));
                }
            }
            if !enabled.is_empty() || !self.advance_time() {
                break;
            }
        }
        if self.crashes_left > 0 && !enabled.is_empty() {
            self.enable_crashes(&mut enabled);
        }
        if self.faults_left > 0 && !enabled.is_empty() {
            self.enable_faults(&mut enabled);
        }
        if self.clock_jumps_left > 0
            && !self.clock_paused
            && !enabled.is_empty()
            && !self.timers.is_empty()
        {
            self.enable_clock_jump(&mut enabled);
        }
        if enabled.is_empty() {
            self.enabled = enabled;
            self.end_blocked();
            return;
        }
        if let Some((invariant, message)) = self.bound.cut(self.steps) {
            self.enabled = enabled;
            self.violate(invariant, message);
            return;
        }
        if self.fair_yields > 0 {
            self.fair(&mut enabled);
        }
        let tasks = &self.tasks;
        let names = |t: TaskId| &*tasks[t.0].name;
        let prev_accesses = self.accesses.as_ref().map_or(&[][..], |a| a.last());
        let (objects, task_events) = (&self.objects, &self.task_events);
        let fingerprint = self.values.as_ref().map(|v| {
            // Virtual time and the timers pending are part of the state.
            let time = super::digest::mix(self.now.as_nanos() as u64, self.timers.len() as u64);
            move || super::digest::mix(v.fingerprint(objects, tasks, task_events), time)
        });
        // A crash task is never the one that goes on by default: once it has crashed a node,
        // moving off it is no preemption and staying on it would be another crash.
        // The same for the clock task.
        let prev = prev.filter(|p| !self.tasks[p.0].pending.is_some_and(Op::is_intervention));
        let view = PickView {
            step: self.steps,
            enabled: &enabled,
            current: prev,
            prev_accesses,
            state_of: fingerprint.as_ref().map(|f| f as &dyn Fn() -> u64),
            names: &names,
        };
        let picked = self.strategy.pick_task(&view);
        let pick = match picked {
            Ok(t) => {
                debug_assert!(
                    enabled.contains(&t),
                    "strategy picked task {t:?}, which is not enabled"
                );
                t
            }
            Err(stop) => {
                self.enabled = enabled;
                self.stop(stop);
                return;
            }
        };
        // Moving off a task that yielded is what it asked for, not a preemption.
        let preempted = prev.is_some_and(|p| {
            p != pick && enabled.contains(&p) && self.tasks[p.0].pending != Some(Op::YieldNow)
        });
        self.enabled = enabled;
        let op = self.tasks[pick.0]
            .pending
            .take()
            .expect("an enabled task is parked");
        // A crash is the strategy's intervention, never what a task asked for: it counts as a
        // preemption, so bounds limit crashes too and the shrinker drops the unneeded ones.
        // So is a clock jump: time running ahead of a task that could still move.
        if op.is_intervention() {
            self.count_intervention(op);
        }
        let preempted = preempted || op.is_intervention();
        if preempted {
            self.preempted_steps.push(self.steps);
        }
        self.decisions.push(Recorded::task(pick));
        if let Some(steps) = &mut self.accesses {
            steps.begin_step();
        }
        if self.fair_yields > 0 {
            self.fair_grant(pick, op);
        }
        if let Op::Blocked(obj) = op {
            self.tasks[pick.0].waits_on.clear();
            self.blocked_tasks -= 1;
            // The wake is consumed: the task's future is polled again.
            *self.state_mut(obj) = ObjState::Wake { woken: false };
            if let Some(flag) = &self.tasks[pick.0].wake_flag {
                flag.take();
            }
        }
        self.tasks[pick.0].last_granted = Some(self.steps);
        if let Some(values) = &mut self.values {
            // The task moves past one more scheduling point (what it learns there, the
            // primitive reports).
            values.step(pick.0, op.code());
        }
        // Two words a step: who moved and how (op codes fit a byte), and on what.
        self.digest.write_u64((pick.0 as u64) << 8 | op.code());
        self.digest
            .write_usize(op.object().map_or(usize::MAX, |o| o.0));
        let label = self.tasks[pick.0].label.take();
        if let Some(trace) = &mut self.trace {
            let op_text = match (label, op.object()) {
                (Some(label), Some(o)) => label.describe(&self.objects[o.0].name),
                _ => Describe {
                    op,
                    objects: &self.objects,
                }
                .to_string(),
            };
            trace.lines.push(TraceLine::Step {
                step: self.steps,
                task: self.tasks[pick.0].name.to_string(),
                op: op_text,
                object: op.object().map(|o| self.objects[o.0].name.to_string()),
                effect: None,
                preempted,
            });
        }
        if let Op::Choose(n) = op {
            match self.strategy.pick_value(self.steps, n) {
                Ok(v) => {
                    self.tasks[pick.0].choice = v;
                    if let Some(values) = &mut self.values {
                        values.chose(pick.0, v);
                    }
                    self.decisions.push(Recorded::choice(v));
                    self.digest.write_usize(v);
                    self.note_effect(|| format!("{v}"));
                }
                Err(stop) => {
                    self.stop(stop);
                    return;
                }
            }
        }
        self.steps += 1;
        self.current = Some(pick);
        let task = &mut self.tasks[pick.0];
        task.granted = true;
        // A task that blocked on a waker has returned to madsim: wake it even when it is the
        // one that just ran (a task at a scheduling point picked again goes on without it).
        if Some(pick) != prev || matches!(op, Op::Blocked(_)) {
            if let Some(w) = &task.waker {
                w.wake_by_ref();
            }
        }
    }

    /// Adds the crash tasks of the nodes that are up: a crash can happen wherever another task
    /// could run (never instead of quiescence or a deadlock).
    fn enable_crashes(&mut self, enabled: &mut Vec<TaskId>) {
        for (i, task) in self.tasks.iter().enumerate() {
            let Some(Op::Crash(obj)) = task.pending else {
                continue;
            };
            if task.finished {
                continue;
            }
            if let Some(node) = self.nodes.iter().position(|&(_, o)| o == obj) {
                if self.node_up(node) {
                    enabled.push(TaskId(i));
                }
            }
        }
        // Kept after the tasks proper (not sorted in): a strategy's default pick, the first
        // enabled task, is never a crash.
    }

    /// Counts an intervention by its kind: a fault by its site's first word ("reset conn#1 ..").
    fn count_intervention(&mut self, op: Op) {
        let kind = match op {
            Op::Crash(_) => "crash".to_string(),
            Op::ClockJump(_) => "clock jump".to_string(),
            Op::Fault(o) => {
                let name = &self.objects[o.0].name;
                name.split(' ').next().unwrap_or(name).to_string()
            }
            _ => return,
        };
        self.interventions.push((self.steps, kind));
    }

    /// Adds the fault sites that are armed, after the tasks proper (as crashes).
    fn enable_faults(&mut self, enabled: &mut Vec<TaskId>) {
        for (i, task) in self.tasks.iter().enumerate() {
            let Some(Op::Fault(obj)) = task.pending else {
                continue;
            };
            let armed = matches!(
                self.objects[obj.0].state,
                ObjState::FaultSite { armed: true }
            );
            if !task.finished && armed {
                enabled.push(TaskId(i));
            }
        }
    }

    /// Adds the clock task, after the tasks proper (a strategy's default pick is never a jump).
    fn enable_clock_jump(&mut self, enabled: &mut Vec<TaskId>) {
        if let Some(clock) = self.clock_task {
            if matches!(self.tasks[clock.0].pending, Some(Op::ClockJump(_))) {
                enabled.push(clock);
            }
        }
    }

    /// The clock task's step: virtual time jumps to the next deadline and its timers fire,
    /// while other tasks could still have run first.
    pub(crate) fn jump_clock(&mut self) {
        self.clock_jumps_left = self.clock_jumps_left.saturating_sub(1);
        self.advance_time();
    }

    /// Whether a clock task should be started now: the run may jump its clock and has none.
    pub(crate) fn wants_clock(&self) -> bool {
        self.clock_jumps_left > 0 && self.clock_task.is_none() && !self.is_over()
    }

    /// Keeps in `enabled` only the tasks a fair scheduler may pick (loom's `Yield` state,
    /// CHESS's fairness): a task in a fair yield waits until every task that was enabled when
    /// it yielded has taken a step since, or is no longer enabled. Some task always remains (the
    /// one that yielded first waits only on tasks that have moved since), but if none did, all
    /// stay: fairness must never stop a run.
    fn fair(&mut self, enabled: &mut Vec<TaskId>) {
        let steps = self.steps;
        // A node's crash is no task to be fair to: no one waits for it, and it never runs
        // just because the others wait (see `enable_crashes`).
        let is_crash = |t: &Task| t.pending.is_some_and(Op::is_intervention);
        for &t in enabled.iter() {
            let task = &self.tasks[t.0];
            if task.pending == Some(Op::YieldNow) && task.fair_wait.is_none() {
                let others = enabled
                    .iter()
                    .filter(|&&o| o != t && !is_crash(&self.tasks[o.0]))
                    .map(|o| o.0 as u32)
                    .collect();
                self.tasks[t.0].fair_wait = Some(super::task::FairWait {
                    since: steps,
                    others,
                });
            }
        }
        let waits = |t: TaskId| {
            self.tasks[t.0].fair_wait.as_ref().is_some_and(|w| {
                w.unmoved(&self.tasks)
                    .any(|o| enabled.contains(&TaskId(o as usize)))
            })
        };
        // A tokio yield may go on at once (tokio may poll the yielder again before the
        // others), but not twice in a row: a cycle of yields still lets the others move, so
        // spin-waits stay finite and provable.
        let waiting: Vec<(TaskId, bool, bool)> = enabled
            .iter()
            .map(|&t| {
                let task = &self.tasks[t.0];
                let may_skip = task.yield_may_continue && !task.continued_yield;
                let waits = waits(t);
                (t, waits && !may_skip, waits && may_skip)
            })
            .collect();
        let mut eligible = Vec::with_capacity(enabled.len());
        let mut crashes = Vec::new();
        let mut all = Vec::with_capacity(enabled.len());
        for (t, restricted, skipping) in waiting {
            self.tasks[t.0].skipping_yield = skipping;
            if is_crash(&self.tasks[t.0]) {
                crashes.push(t);
                continue;
            }
            all.push(t);
            if !restricted {
                eligible.push(t);
            }
        }
        let tasks = all;
        if eligible.is_empty() {
            eligible = tasks;
        }
        eligible.extend(crashes);
        *enabled = eligible;
    }

    /// As `pick` takes its step: a task's fair yield ends when it is granted. (Reductions do
    /// not see fairness's dependencies: `Explorer` searches a model that yields fairly without
    /// them, or by value without sleep sets.)
    fn fair_grant(&mut self, pick: TaskId, op: Op) {
        if op == Op::YieldNow {
            let task = &mut self.tasks[pick.0];
            task.fair_wait = None;
            task.continued_yield = std::mem::take(&mut task.skipping_yield);
            task.yield_may_continue = false;
            self.fair_yields -= 1;
        }
    }

    /// Ends the run where the strategy stopped it.
    fn stop(&mut self, stop: Stop) {
        match stop {
            Stop::Diverged(d) => self.finish(End::Divergence(d)),
            Stop::Pruned => self.finish(End::Pruned),
            Stop::Livelock(message) => self.violate("livelock", message),
            Stop::HiddenState(message) => self.violate(crate::strategy::HIDDEN_STATE, message),
        }
    }

    /// Nobody can run: quiescence if every unfinished task is idle, else a deadlock.
    fn end_blocked(&mut self) {
        let parked = |t: &Task| {
            t.pending
                .expect("an unfinished task that is not running is parked")
        };
        let unfinished = || self.tasks.iter().filter(|t| !t.finished);
        let main_done = self.main.is_some_and(|m| self.tasks[m.0].finished);
        if main_done || unfinished().all(|t| t.daemon || parked(t).is_idle_wait()) {
            self.finish(End::Quiescent);
            return;
        }
        // A deadlock: say who waits on what (only now, not at every quiescent end).
        let mut stuck = String::new();
        let mut idle = String::new();
        // Daemons (deliveries, fault sites) wait as a matter of course: not worth a word.
        for t in unfinished().filter(|t| !t.daemon) {
            let op = parked(t);
            let line = if t.daemon || op.is_idle_wait() {
                &mut idle
            } else {
                &mut stuck
            };
            if !line.is_empty() {
                line.push_str("; ");
            }
            match self.said_wait(t, false) {
                Some(wait) => line.push_str(&wait.describe()),
                None => {
                    let _ = write!(
                        line,
                        "{} waits on {}",
                        t.name,
                        Describe {
                            op,
                            objects: &self.objects
                        }
                    );
                }
            }
        }
        if !idle.is_empty() {
            let _ = write!(stuck, " (idle: {idle})");
        }
        if self.trace.is_some() {
            let waits = unfinished().map(|t| self.wait_of(t, parked(t))).collect();
            if let Some(trace) = &mut self.trace {
                trace.wait_for = waits;
            }
        }
        self.violate("deadlock", format!("no task can run: {stuck}"));
    }
}

impl Execution {
    /// What `task`, parked on `op` at a deadlock, waits for: the object's state that keeps it
    /// waiting and who holds the object (for the pictures, beside the violation's message).
    fn wait_of(&self, task: &Task, op: Op) -> Wait {
        if let Some(wait) = self.said_wait(task, true) {
            return wait;
        }
        let name = |t: usize| self.tasks[t].name.to_string();
        let (state, holders) = match op.object().map(|o| (o, &self.objects[o.0].state)) {
            Some((_, ObjState::Mutex { owner: Some(t) })) => {
                (format!("held by {}", name(*t)), vec![name(*t)])
            }
            Some((
                _,
                ObjState::RwLock {
                    writer: Some(t), ..
                },
            )) => (format!("write-locked by {}", name(*t)), vec![name(*t)]),
            Some((_, ObjState::RwLock { readers, .. })) if *readers > 0 => {
                (format!("read-locked by {readers} reader(s)"), Vec::new())
            }
            Some((_, ObjState::Channel { len, cap })) if matches!(op, Op::Send(_)) => {
                (format!("full: {len} of {cap}"), Vec::new())
            }
            Some((_, ObjState::Channel { cap, .. })) => {
                (format!("empty (capacity {cap})"), Vec::new())
            }
            Some((_, ObjState::Notify { .. })) => ("no notification pending".into(), Vec::new()),
            Some((o, ObjState::Task { .. })) => {
                match self.tasks.iter().position(|t| t.done == Some(o)) {
                    Some(t) => (format!("{} has not finished", name(t)), vec![name(t)]),
                    None => ("not finished".into(), Vec::new()),
                }
            }
            Some((_, ObjState::Wake { .. })) => ("nothing woke it".into(), Vec::new()),
            _ => (String::new(), Vec::new()),
        };
        Wait {
            task: task.name.to_string(),
            op: Describe {
                op,
                objects: &self.objects,
            }
            .to_string(),
            object: op.object().map(|o| self.objects[o.0].name.to_string()),
            state,
            holders,
            idle: op.is_idle_wait(),
        }
    }
}

/// A task's name without the `#n` that `add_task` appends to a namesake's.
fn base_name(name: &str) -> &str {
    match name.rsplit_once('#') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}
