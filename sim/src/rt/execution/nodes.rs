//! The run's nodes and their crashes: which nodes started (name and object), how many crashes
//! the run may still decide, what a crash does besides killing the node's tasks, and the tasks
//! the last crash killed (see `sim::node`).

use super::Execution;
use crate::rt::op::{ObjState, Op};
use crate::rt::task::TaskState;
use crate::vocab::ObjId;
use crate::vocab::TaskId;

/// What a node's crash does besides killing its tasks, given the node's name.
pub(crate) type CrashHook = std::rc::Rc<dyn Fn(&str)>;

#[derive(Default)]
pub(crate) struct Nodes {
    /// By number, in the order they started: the name and the node's object.
    nodes: Vec<(String, ObjId)>,
    crashes_left: usize,
    /// What a node's crash does besides killing its tasks (its connections reset, its unsynced
    /// writes decided), in the order registered (see `node::on_crash`).
    hooks: Vec<CrashHook>,
    /// The tasks the last crash killed whose futures the runtime may not have dropped yet.
    victims: Vec<TaskId>,
}

impl Nodes {
    /// Lets the run crash nodes up to `crashes` times (`Model::crashes`).
    pub(crate) fn allow_crashes(&mut self, crashes: usize) {
        self.crashes_left = crashes;
    }

    pub(crate) fn may_crash(&self) -> bool {
        self.crashes_left > 0
    }

    pub(crate) fn hooks(&self) -> Vec<CrashHook> {
        self.hooks.clone()
    }

    pub(crate) fn on_crash(&mut self, hook: CrashHook) {
        self.hooks.push(hook);
    }
}

impl Execution {
    pub(crate) fn add_node(&mut self, name: String, obj: ObjId) -> usize {
        // A crash depends on every step of its node's tasks, which no reduction sees: runs
        // that may crash a node are searched without reduction, as timed runs are.
        if self.nodes.may_crash() {
            self.set_used_time();
        }
        self.nodes.nodes.push((name, obj));
        self.nodes.nodes.len() - 1
    }

    pub(crate) fn node_object(&self, node: usize) -> ObjId {
        self.nodes.nodes[node].1
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
                    (Some(n), _) => self.nodes.nodes[n].0.clone(),
                    (None, true) => crate::trace::NETWORK_LANES.to_string(),
                    (None, false) => return None,
                };
                Some((t.name.to_string(), host))
            })
            .collect()
    }

    /// How many nodes started.
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.nodes.len()
    }

    /// The nodes' names, in the order they started.
    pub(crate) fn node_names(&self) -> Vec<String> {
        self.nodes.nodes.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The name of the node `task` belongs to, if any.
    pub(crate) fn node_of(&self, task: TaskId) -> Option<&str> {
        self.tasks[task.0]
            .node
            .map(|n| self.nodes.nodes[n].0.as_str())
    }

    /// The run's nodes, to register what a crash does or read it.
    pub(crate) fn nodes_mut(&mut self) -> &mut Nodes {
        &mut self.nodes
    }

    fn node_up(&self, node: usize) -> bool {
        self.tasks
            .iter()
            .any(|t| t.node == Some(node) && !t.state.is_finished())
    }

    /// Kills every task of `node`: each stops where it is parked, its locks are released and
    /// its join fails; the driver drops its future once this step's slice has returned.
    pub(crate) fn crash_node(&mut self, node: usize) {
        self.nodes.crashes_left -= 1;
        let mut killed = Vec::new();
        for i in 0..self.tasks.len() {
            let task = &mut self.tasks[i];
            if task.node != Some(node) || task.state.is_finished() {
                continue;
            }
            let was = std::mem::replace(&mut task.state, TaskState::Finished { killed: true });
            task.fair_wait = None;
            match was.parked_on() {
                Some(Op::Blocked(_)) => self.blocked_tasks -= 1,
                Some(Op::YieldNow) => self.fairness.left_yield(),
                _ => {}
            }
            killed.push(task.name.to_string());
            if let Some(done) = task.done {
                *self.state_mut(done) = ObjState::Task { finished: true };
            }
            self.release_locks_of(i);
            self.nodes.victims.push(TaskId(i));
        }
        self.note_effect(|| format!("killed {}", killed.join(", ")));
    }

    /// Releases the mutexes and write locks task number `task` holds (it was killed).
    fn release_locks_of(&mut self, task: usize) {
        for o in 0..self.objects.len() {
            match self.objects[o].state {
                ObjState::Mutex { owner: Some(t) } if t == task => {
                    *self.state_mut(ObjId(o)) = ObjState::Mutex { owner: None };
                }
                ObjState::RwLock {
                    readers,
                    writer: Some(t),
                } if t == task => {
                    *self.state_mut(ObjId(o)) = ObjState::RwLock {
                        readers,
                        writer: None,
                    };
                }
                _ => {}
            }
        }
    }

    /// The tasks the last crash killed, in task order.
    pub(crate) fn victims(&self) -> Vec<TaskId> {
        self.nodes.victims.clone()
    }

    /// The tasks the last crash killed whose futures the driver has not dropped yet.
    pub(crate) fn victims_alive(&mut self) -> usize {
        let tasks = &self.tasks;
        self.nodes.victims.retain(|t| !tasks[t.0].dropped);
        self.nodes.victims.len()
    }

    /// Adds the crash tasks of the nodes that are up: a crash can happen wherever another task
    /// could run (never instead of quiescence or a deadlock).
    pub(super) fn enable_crashes(&mut self, enabled: &mut Vec<TaskId>) {
        for (i, task) in self.tasks.iter().enumerate() {
            let TaskState::Parked(Op::Crash(obj)) = task.state else {
                continue;
            };
            if let Some(node) = self.nodes.nodes.iter().position(|&(_, o)| o == obj) {
                if self.node_up(node) {
                    enabled.push(TaskId(i));
                }
            }
        }
        // Kept after the tasks proper (not sorted in): a strategy's default pick, the first
        // enabled task, is never a crash.
    }
}
