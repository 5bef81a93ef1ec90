//! A model task's record within a run: its identity, where it is (`TaskState`), and what the
//! engine keeps about it (its waker, its wait, its node). The futures that drive it are in
//! `model_task.rs`; its scheduling points in `point.rs` and `sync_point.rs`.

use std::sync::Arc;

use super::op::Op;

pub(crate) struct Task {
    pub name: Arc<str>,
    /// A hash of the name without its namesake suffix (`handler#2` -> `handler`), for end
    /// states (see `Execution::end_state`).
    pub base_hash: u64,
    /// Parked, granted, running or finished: one state, where flags would allow mixes that
    /// never happen.
    pub state: TaskState,
    /// The value drawn for the task's last `choose`.
    pub choice: usize,
    /// The object its end writes, when someone may join it.
    pub done: Option<crate::vocab::ObjId>,
    /// The step at which the strategy last granted it the baton.
    pub last_granted: Option<usize>,
    /// Set by the waker the task's future sees (`TaskWake`); read at each decision while the
    /// task is blocked on it (`Op::Blocked`).
    pub wake_flag: Option<Arc<TaskWake>>,
    /// Its wake-up object, once it has blocked on a waker.
    pub wake_obj: Option<crate::vocab::ObjId>,
    /// While it waits in a fair yield: the step from which the others' steps count, and the
    /// tasks that were enabled then (see `Execution::fair`).
    pub fair_wait: Option<FairWait>,
    /// Its pending yield is tokio's (`sim::yield_like_tokio`): it may go on at once, before
    /// the others move, unless its last yield already did.
    pub yield_may_continue: bool,
    /// Its last yield went on at once: its next one is fair.
    pub continued_yield: bool,
    /// It is eligible now only by going on at once from its yield (set by `Execution::fair`).
    pub skipping_yield: bool,
    /// Cancelled (`sim::task::cancel`): it unwinds at its next await that parks it.
    pub cancelled: bool,
    /// The request (see `Point`) it is parked on, until the point that made it goes on.
    pub parked_token: Option<u64>,
    /// The node it belongs to (see `node`).
    pub node: Option<usize>,
    /// It serves the run rather than the test (a network's delivery, a fault site): waiting,
    /// it never makes the run a deadlock (see `sim::task::spawn_daemon`).
    pub daemon: bool,
    /// Its future has been dropped. Apart from `state`: the record outlives the future that
    /// drives it, which goes when the task finishes, when its node crashes (within the crash's
    /// step), or when the run ends (see `model_task::drive`).
    pub dropped: bool,
    /// What its pending step does, in the words of the primitive that parked it ("lock"),
    /// for traces (see `sync_point_labeled`).
    pub label: Option<Label>,
    /// What it waits on while blocked on its waker, as the primitive said (see
    /// `Execution::waits_on`).
    pub waits_on: Vec<WaitsOn>,
    /// Its current top-level poll, by a number no other poll on this thread has had (see
    /// `next_poll`).
    pub poll: u64,
}

thread_local! {
    static POLLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A number for a task's next top-level poll, never given before on this thread (in any run):
/// what is kept per poll (tokio's cooperative budget, `sim::current_poll`) is told apart by it,
/// though a stackful task parks in the middle of a poll while others run.
pub(crate) fn next_poll() -> u64 {
    POLLS.with(|n| {
        n.set(n.get() + 1);
        n.get()
    })
}

/// Where a task is, as the baton sees it (shuttle's `TaskState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Parked on an operation until the strategy grants it (`Op::Start` before its first step;
    /// `Op::Blocked` while blocked on its waker, whose grant resumes its future from the
    /// driver, `model_task::drive`, rather than a point inside it).
    Parked(Op),
    /// Granted the baton: it goes on at once (from `park`), or is resumed by the driver once
    /// the slice in progress has ended (`Execution::hand_to`).
    Granted,
    /// Holds the baton (or held it when the run ended).
    Running,
    /// Returned or panicked; `killed`: stopped by its node's crash.
    Finished { killed: bool },
}

impl TaskState {
    /// The operation it is parked on, if it is.
    pub(crate) fn parked_on(self) -> Option<Op> {
        match self {
            TaskState::Parked(op) => Some(op),
            _ => None,
        }
    }

    pub(crate) fn is_finished(self) -> bool {
        matches!(self, TaskState::Finished { .. })
    }

    pub(crate) fn is_killed(self) -> bool {
        self == TaskState::Finished { killed: true }
    }
}

/// A step in its primitive's words: the operation ("lock") and, where the primitive was told,
/// the user's call site (`#[track_caller]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label {
    pub op: &'static str,
    pub at: Option<&'static std::panic::Location<'static>>,
}

impl Label {
    /// "lock mutex#1", or "lock mutex#1 at src/pool.rs:26".
    pub fn describe(&self, object: &str) -> String {
        match self.at {
            Some(at) => format!("{} {object} at {}:{}", self.op, at.file(), at.line()),
            None => format!("{} {object}", self.op),
        }
    }
}

/// What a task blocked on its waker waits for, in the primitive's words: the operation
/// ("recv"), the object, and what keeps it waiting ("empty"); who holds the object, the
/// engine knows (`Execution::hold`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitsOn {
    pub op: Label,
    pub object: crate::vocab::ObjId,
    pub state: &'static str,
}

/// What a task in a fair yield waits for: each task in `others` to take a step at or after
/// step `since`, or to stop being enabled.
#[derive(Clone, Debug)]
pub(crate) struct FairWait {
    pub since: usize,
    pub others: Vec<u32>,
}

impl FairWait {
    /// A digest of whom it still waits for (part of a state: it decides who may run next).
    pub(crate) fn digest(&self, tasks: &[Task]) -> u64 {
        use crate::digest::mix;
        self.unmoved(tasks).fold(7, |h, o| mix(h, u64::from(o)))
    }

    /// The tasks it still waits for to move (before any is checked for being enabled).
    pub(crate) fn unmoved<'t>(&'t self, tasks: &'t [Task]) -> impl Iterator<Item = u32> + 't {
        self.others.iter().copied().filter(move |&w| {
            tasks[w as usize]
                .last_granted
                .is_none_or(|g| g < self.since)
        })
    }
}

/// What a model task's waker does: note that the task may go on. It touches nothing else (a
/// waker may be called from anywhere, even while the execution is borrowed): the executor reads
/// the flag when it next decides.
#[derive(Default)]
pub(crate) struct TaskWake {
    woken: std::sync::atomic::AtomicBool,
}

impl TaskWake {
    /// Whether it was woken since it was last cleared, clearing it.
    pub(crate) fn take(&self) -> bool {
        self.woken.swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn is_set(&self) -> bool {
        self.woken.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl std::task::Wake for TaskWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Task {
    /// Takes the baton if the strategy granted it.
    pub(super) fn take_grant(&mut self) -> bool {
        let granted = self.state == TaskState::Granted;
        if granted {
            self.state = TaskState::Running;
        }
        granted
    }
}
