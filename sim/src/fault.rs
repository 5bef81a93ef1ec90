//! Faults as decisions: places where the strategy may strike (a connection reset, a partition,
//! a lost datagram), each a *fault site* whose strikes are steps of a task of its own, as a
//! node's crashes are. A site is enabled while it is armed, the run's fault budget
//! (`Model::network_faults`) lasts and another task can run; a strike counts as a preemption,
//! so preemption bounds limit faults too, the shrinker drops the ones a failure does not need,
//! and a replay file names each by its site ("reset conn#1 main->kv:7000").
//!
//! Also here, what a library built on the engine needs to keep a world per run: daemon tasks
//! (a network's delivery: never a deadlock when they wait), state kept per run by type, and
//! values a step draws without parking (what a crash did to each unsynced write).

use std::future::Future;
use std::rc::Rc;

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::with_exec;
use crate::vocab::ObjId;

/// A place where the strategy may inject a fault.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    obj: ObjId,
}

impl Site {
    /// Starts a site named `name` (what traces and replay files call its strikes), armed or
    /// not. Each strike spends one fault of the run's budget and runs `strike` within the
    /// strike's step; after it, the site is disarmed until `arm` is called again.
    pub fn start(name: impl Into<String>, armed: bool, strike: impl Fn() + 'static) -> Site {
        let name = name.into();
        let obj = with_exec(|ex| {
            // A strike's enabling depends on the budget, which no reduction sees: runs that may
            // strike are searched without reduction, as runs that may crash are. Without a
            // budget a site is never enabled, and a delivery is a step on its own connection's
            // objects only: deliveries on different connections are independent.
            if ex.faults().left() > 0 {
                ex.set_used_time();
            }
            ex.faults_mut().site_started();
            ex.add_object(name.clone().into(), ObjState::FaultSite { armed })
        });
        let task = spawn_daemon(name, async move {
            // Spawned parked on its fault: each grant is a strike.
            loop {
                with_exec(|ex| {
                    ex.faults_mut().spend();
                    *ex.state_mut(obj) = ObjState::FaultSite { armed: false };
                });
                strike();
                point(Op::Fault(obj)).await;
            }
        });
        with_exec(|ex| ex.first_waits_on(task, Op::Fault(obj)));
        Site { obj }
    }

    /// Arms or disarms the site: a fault may strike there only while it is armed.
    pub fn arm(&self, armed: bool) {
        with_exec(|ex| *ex.state_mut(self.obj) = ObjState::FaultSite { armed });
    }
}

/// Spawns a task that serves the run rather than the test (a connection's delivery): outside
/// every node (a crash does not kill it), and never a deadlock when it waits at the end.
pub fn spawn_daemon<F>(name: impl AsRef<str>, future: F) -> crate::TaskId
where
    F: Future<Output = ()> + 'static,
{
    let task = crate::spawn(name, future);
    with_exec(|ex| {
        ex.tasks[task.0].node = None;
        ex.tasks[task.0].daemon = true;
    });
    task
}

/// A value in `0..n` the strategy picks within the running task's step, without parking it:
/// recorded as a `choose` in the schedule, so replays and searches decide it too, with `what`
/// it decides (the replay file's reader sees it; 0 should be the weakest outcome, the one the
/// shrinker weakens to).
pub fn draw(n: usize, what: impl FnOnce() -> String) -> usize {
    assert!(n > 0, "draw needs at least one alternative");
    let what: std::sync::Arc<str> = what().into();
    with_exec(|ex| ex.draw(n, what))
}

/// Adds a line to the run's trace for the running task (a fault's effect), when tracing.
pub fn note(text: impl FnOnce() -> String) {
    with_exec(|ex| ex.trace_event(text));
}

/// This run's value of `T`, made with `Default` on first use and dropped with the run: where a
/// library keeps its world (hosts, connections, disks).
pub fn run_local<T: Default + 'static>() -> Rc<T> {
    with_exec(|ex| ex.run_local::<T>())
}

/// Whether the run may still inject faults (its budget is not spent).
pub fn budget_left() -> usize {
    with_exec(|ex| ex.faults().left())
}
