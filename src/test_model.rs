//! A test body as a model: the body is the run's main task, every primitive it creates is the
//! engine's, and the properties it declares (`Log`) are judged by the engine.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use sim::{Grain, Model, Monitor, Violation};

/// A test's clock may jump ahead of a task that can still run once per run (a slow task
/// losing to its timeout, as on a real clock), unless it asks for tokio's paused clock.
pub(crate) const DEFAULT_CLOCK_JUMPS: usize = 1;

type Body = dyn Fn() -> Pin<Box<dyn Future<Output = ()>>> + Send + Sync;

/// A test's body, started afresh in every run.
#[derive(Clone)]
pub(crate) struct TestModel {
    body: Arc<Body>,
    grain: Grain,
    crashes: usize,
    network_faults: usize,
    clock_jumps: usize,
    /// The test shares state braid does not see (a `RefCell`, std's locks and atomics)
    /// between its tasks: its searches run without reduction.
    plain_state: bool,
}

impl TestModel {
    pub(crate) fn new<F, Fut>(body: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        TestModel {
            body: Arc::new(move || Box::pin(body())),
            grain: Grain::Access,
            crashes: 0,
            network_faults: 0,
            clock_jumps: DEFAULT_CLOCK_JUMPS,
            plain_state: false,
        }
    }

    pub(crate) fn with_plain_state(mut self) -> Self {
        self.plain_state = true;
        self
    }

    /// Undoes `with_plain_state`: the user says every shared state goes through braid
    /// (`BRAID_STATE_SEEN`).
    pub(crate) fn with_seen_state(mut self) -> Self {
        self.plain_state = false;
        self
    }

    pub(crate) fn with_crashes(mut self, crashes: usize) -> Self {
        self.crashes = crashes;
        self
    }

    pub(crate) fn with_network_faults(mut self, faults: usize) -> Self {
        self.network_faults = faults;
        self
    }

    pub(crate) fn with_clock_jumps(mut self, jumps: usize) -> Self {
        self.clock_jumps = jumps;
        self
    }

    pub(crate) fn with_grain(mut self, grain: Grain) -> Self {
        self.grain = grain;
        self
    }
}

impl Model for TestModel {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::task::spawn_main("main", (self.body)());
        Rc::new(NothingMore)
    }

    /// Every operation on a braid primitive is a scheduling point unless a test asks otherwise.
    fn grain(&self) -> Grain {
        self.grain
    }

    /// A test's code is written for tokio and std: a synchronous atomic load or `try_send` must
    /// be able to park its task.
    fn stackful_tasks(&self) -> bool {
        true
    }

    fn crashes(&self) -> usize {
        self.crashes
    }

    fn clock_jumps(&self) -> usize {
        self.clock_jumps
    }

    fn network_faults(&self) -> usize {
        self.network_faults
    }

    /// A test shares state between its tasks through braid's primitives (`braid::sync`,
    /// `braid::tokio`, `braid::std`), each operation a step on an engine object, unless it says
    /// otherwise (`Check::plain_state`, and every `#[tokio::test]` through the drop-in, whose
    /// code commonly shares std's locks): then the DFS's reduction sees every dependency.
    /// Not `state_visible`: a task's locals are not named at its checkpoints.
    fn reduction_safe(&self) -> bool {
        !self.plain_state
    }
}

/// A test's verdicts come from panics and its `Log`s' properties (watched by the engine).
struct NothingMore;

impl Monitor for NothingMore {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}
