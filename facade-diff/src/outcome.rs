//! What one run of a program reached, and the harness's bookkeeping that records it.
//!
//! The bookkeeping is plain `std` (atomics and a mutex), never a facade call: under braid it is
//! no scheduling point, so the harness adds no interleaving of its own; under tokio it is
//! shared between worker threads.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};

/// One observation, in the order the task made it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Obs {
    /// A value read or received.
    V(usize),
    Ok,
    /// A send whose receiver was gone (oneshot), or closed (mpsc, watch).
    Err,
    Empty,
    Closed,
    /// A `timeout` wait gave up.
    TimedOut,
    /// A join of an aborted task.
    Cancelled,
    /// Which branch of a `select!` won.
    Won(u8),
    Bool(bool),
    /// A read of the connection found its end.
    Eof,
    /// What an I/O call failed with (the kind only: the messages differ by construction).
    Io(std::io::ErrorKind),
    /// The file's contents.
    Bytes(Vec<u8>),
}

/// How a task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum End {
    /// Ran every operation.
    Done,
    /// Stuck for good in its operation number `k` (from 0).
    Stuck(usize),
    /// Aborted (its future dropped before it ended).
    Cancelled,
}

/// What a run reached: each task's observations and how it ended, then the atomics' final
/// values. No task ids, no times: nothing that differs between the runtimes by construction.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Outcome {
    pub tasks: Vec<(Vec<Obs>, End)>,
    pub atoms: Vec<usize>,
}

impl fmt::Display for Obs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Obs::V(v) => write!(f, "{v}"),
            Obs::Ok => write!(f, "ok"),
            Obs::Err => write!(f, "err"),
            Obs::Empty => write!(f, "empty"),
            Obs::Closed => write!(f, "closed"),
            Obs::TimedOut => write!(f, "timeout"),
            Obs::Cancelled => write!(f, "cancelled"),
            Obs::Won(b) => write!(f, "won:{}", ["first", "second"][usize::from(*b)]),
            Obs::Bool(b) => write!(f, "{b}"),
            Obs::Eof => write!(f, "eof"),
            Obs::Io(kind) => write!(f, "{kind:?}"),
            Obs::Bytes(bytes) => write!(f, "file{bytes:?}"),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (obs, end)) in self.tasks.iter().enumerate() {
            let obs: Vec<String> = obs.iter().map(Obs::to_string).collect();
            let end = match end {
                End::Done => "done".to_string(),
                End::Stuck(k) => format!("stuck in op {k}"),
                End::Cancelled => "aborted".to_string(),
            };
            write!(f, "t{i}: [{}] {end}; ", obs.join(", "))?;
        }
        let atoms: Vec<String> = self.atoms.iter().map(usize::to_string).collect();
        write!(f, "finally a = [{}]", atoms.join(", "))
    }
}

/// A task is running an operation (or the harness between two).
pub const RUNNING: u8 = 0;
/// A task waits in a harness-timed wait.
pub const WAITING: u8 = 1;
/// A task has ended (done, stuck or aborted).
pub const SETTLED: u8 = 2;

/// One run's bookkeeping.
pub struct Run {
    states: Vec<AtomicU8>,
    /// Bumped when a task completes a wait or ends: under tokio, a wait gives up only when no
    /// task moved for its last ticks.
    progress: AtomicU64,
    logs: Vec<Mutex<Vec<Obs>>>,
    ends: Vec<Mutex<Option<End>>>,
    stuck: Vec<AtomicBool>,
    settled: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run {
    pub fn new(tasks: usize) -> Run {
        Run {
            states: (0..tasks).map(|_| AtomicU8::new(RUNNING)).collect(),
            progress: AtomicU64::new(0),
            logs: (0..tasks).map(|_| Mutex::new(Vec::new())).collect(),
            ends: (0..tasks).map(|_| Mutex::new(None)).collect(),
            stuck: (0..tasks).map(|_| AtomicBool::new(false)).collect(),
            settled: AtomicUsize::new(0),
        }
    }

    pub fn observe(&self, me: usize, obs: Obs) {
        lock(&self.logs[me]).push(obs);
    }

    pub fn set_state(&self, me: usize, state: u8) {
        self.states[me].store(state, SeqCst);
    }

    pub fn bump(&self) {
        self.progress.fetch_add(1, SeqCst);
    }

    pub fn progress(&self) -> u64 {
        self.progress.load(SeqCst)
    }

    /// Every task but `me` waits or has ended.
    pub fn others_quiet(&self, me: usize) -> bool {
        self.states
            .iter()
            .enumerate()
            .all(|(i, s)| i == me || s.load(SeqCst) != RUNNING)
    }

    /// Whether task `t` is stuck for good.
    pub fn is_stuck(&self, t: usize) -> bool {
        self.stuck[t].load(SeqCst)
    }

    /// Task `me` ended so (the first end recorded counts).
    pub fn end(&self, me: usize, end: End) {
        let mut slot = lock(&self.ends[me]);
        if slot.is_some() {
            return;
        }
        *slot = Some(end);
        if let End::Stuck(_) = end {
            self.stuck[me].store(true, SeqCst);
        }
        self.set_state(me, SETTLED);
        self.bump();
        self.settled.fetch_add(1, SeqCst);
    }

    /// Every task has ended.
    pub fn all_settled(&self) -> bool {
        self.settled.load(SeqCst) == self.states.len()
    }

    /// The outcome, once every task has ended.
    pub fn outcome(&self, atoms: Vec<usize>) -> Outcome {
        let tasks = self
            .logs
            .iter()
            .zip(&self.ends)
            .map(|(log, end)| (lock(log).clone(), lock(end).expect("every task has ended")))
            .collect();
        Outcome { tasks, atoms }
    }
}

/// Moved into a task's future: if the future is dropped before the task recorded its end (it
/// was aborted, before its first poll or at a wait), records `Cancelled`.
pub struct Settle {
    pub run: Arc<Run>,
    pub me: usize,
}

impl Drop for Settle {
    fn drop(&mut self) {
        self.run.end(self.me, End::Cancelled);
    }
}
