//! Nodes: groups of tasks that crash together and restart from durable state (madsim's
//! notion of a node). A crash is a strategy decision like any other: each node has a crash
//! task, enabled at every scheduling point while the run's crash budget (`Model::crashes`)
//! lasts and some other task can run; picking it kills every task of the node (their futures
//! are dropped, their locks released, their joins fail) and runs the node's init again. What
//! the model keeps outside the node's tasks (a `Durable` value the init captures) survives;
//! everything the tasks own is lost. Replay files record crashes as the crash task's steps,
//! so a shrunk schedule keeps only the crashes it needs.

use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::rt::op::{ObjState, Op};
use crate::rt::point::point;
use crate::rt::with_exec;
use crate::sync::Shared;

/// What a node runs when it starts and after each crash.
pub type Init = Rc<dyn Fn() -> Pin<Box<dyn Future<Output = ()>>>>;

/// Starts a node named `name`: spawns `init` as its first task (tasks it spawns belong to the
/// node too), and the node's crash task.
pub fn start<F, Fut>(name: &str, init: F)
where
    F: Fn() -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let init: Init = Rc::new(move || Box::pin(init()));
    let node = with_exec(|ex| {
        let obj = ex.add_object(format!("node {name}").into(), ObjState::Node);
        ex.add_node(name.to_string(), obj)
    });
    boot(node, &init, name);
    let crash_name = format!("crash({name})");
    let node_name = name.to_string();
    // The crash task waits on its crash from the start (it has no `start` step of its own):
    // each grant is a crash.
    let obj = with_exec(|ex| ex.node_object(node));
    let crash = crate::spawn(crash_name, async move {
        loop {
            with_exec(|ex| ex.crash_node(node));
            // The killed tasks' futures are dropped (by the driver) before anything else
            // happens: still within this step.
            VictimsGone.await;
            // What else the crash does (connections reset, unsynced writes decided), within
            // this step, before the node starts again.
            let hooks = with_exec(|ex| ex.nodes().hooks());
            for hook in hooks {
                hook(&node_name);
            }
            boot(node, &init, &node_name);
            point(Op::Crash(obj)).await;
        }
    });
    with_exec(|ex| ex.first_waits_on(crash, Op::Crash(obj)));
}

/// Registers what a crash of any node does besides killing its tasks, called with the node's
/// name within the crash's step, before its init runs again (a network resets the node's
/// connections; a disk decides what became of its unsynced writes). For this run only.
pub fn on_crash(hook: impl Fn(&str) + 'static) {
    with_exec(|ex| ex.nodes_mut().on_crash(Rc::new(hook)));
}

/// The node the running task belongs to (`None`: the test body's own tasks).
pub fn current() -> Option<String> {
    with_exec(|ex| {
        let me = ex.current()?;
        ex.node_of(me).map(str::to_string)
    })
}

/// The names of the nodes started so far in this run, in the order they started.
pub fn names() -> Vec<String> {
    with_exec(|ex| ex.node_names())
}

/// Spawns the node's init as one of its tasks.
fn boot(node: usize, init: &Init, name: &str) {
    let task = crate::spawn(name, init());
    with_exec(|ex| ex.join_node(task, node));
}

/// Ready once every task a crash killed has had its future dropped; until then, returns to the
/// driver (which drops them) without giving up the baton.
struct VictimsGone;

impl Future for VictimsGone {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        with_exec(|ex| match ex.victims_alive() {
            0 => Poll::Ready(()),
            _ => {
                ex.reschedule();
                Poll::Pending
            }
        })
    }
}

/// State that survives its node's crashes (a disk, a database): the model creates it outside
/// the node and the node's init captures it. Reads and writes are recorded as `Shared`'s are.
pub struct Durable<T> {
    inner: Shared<T>,
}

impl<T: Hash> Durable<T> {
    /// Durable state named `name` (in traces), holding `value`.
    pub fn new(name: impl Into<crate::Name>, value: T) -> Self {
        Durable {
            inner: Shared::new(name, value),
        }
    }

    /// Reads it.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.inner.with(f)
    }

    /// Changes it (the change is durable at once: a crash after this call keeps it).
    pub fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.inner.with_mut(f)
    }
}
