//! One decision of the search's path: the options a task or a `choose` had there, which the
//! current run took, and what the reduction knows of the others (explored, asleep, accessed).

use std::collections::{BTreeMap, BTreeSet};

use crate::vocab::Access;
use crate::vocab::TaskId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Task,
    Choice { n: usize },
}

#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) kind: Kind,
    /// Enabled tasks at this state (task nodes).
    pub(super) enabled: Vec<TaskId>,
    /// The task that held the baton and is still enabled (a switch away preempts it).
    pub(super) current: Option<TaskId>,
    /// Preemptions on the path before this node.
    pub(super) preemptions: usize,
    /// The option (task index or value) taken in the current run.
    pub(super) chosen: usize,
    /// Options to explore from this node.
    pub(super) backtrack: BTreeSet<usize>,
    /// Options already explored from this node.
    pub(super) done: BTreeSet<usize>,
    /// Tasks asleep here: exploring them would repeat an equivalent schedule.
    pub(super) sleep: Vec<(usize, Vec<Access>)>,
    /// What the step of each explored task accessed (task nodes).
    pub(super) step_accesses: BTreeMap<usize, Vec<Access>>,
    /// The state by value before this step (task nodes, when searching by value).
    pub(super) state: Option<u64>,
    /// Explored tasks whose step here drew a `choose` value: what such a step accesses depends
    /// on the value, so one run's accesses cannot stand for it in a sleep set.
    pub(super) choosers: BTreeSet<usize>,
}

impl Node {
    pub(super) fn is_preemption(&self, option: usize) -> bool {
        self.kind == Kind::Task && self.current.is_some_and(|c| c.0 != option)
    }

    /// This node as a step of a path taking `chosen`: what a search below it needs, without
    /// the record of what was explored from it.
    pub(super) fn path_step(&self, chosen: usize) -> Node {
        Node {
            kind: self.kind,
            enabled: self.enabled.clone(),
            current: self.current,
            preemptions: self.preemptions,
            chosen,
            backtrack: BTreeSet::new(),
            done: BTreeSet::new(),
            sleep: Vec::new(),
            step_accesses: BTreeMap::new(),
            state: self.state,
            choosers: self.choosers.clone(),
        }
    }

    pub(super) fn asleep(&self, task: usize) -> bool {
        self.sleep.iter().any(|(t, _)| *t == task)
    }

    /// A new node for a task's decision, with nothing explored from it yet.
    pub(super) fn task(
        enabled: Vec<TaskId>,
        current: Option<TaskId>,
        preemptions: usize,
        sleep: Vec<(usize, Vec<Access>)>,
        state: Option<u64>,
    ) -> Node {
        Node {
            kind: Kind::Task,
            enabled,
            current,
            preemptions,
            chosen: 0,
            backtrack: BTreeSet::new(),
            done: BTreeSet::new(),
            sleep,
            step_accesses: BTreeMap::new(),
            state,
            choosers: BTreeSet::new(),
        }
    }

    /// A new node for a `choose(n)`, every value to explore, the first taken.
    pub(super) fn choice(n: usize, preemptions: usize) -> Node {
        Node {
            kind: Kind::Choice { n },
            enabled: Vec::new(),
            current: None,
            preemptions,
            chosen: 0,
            backtrack: (0..n).collect(),
            done: BTreeSet::new(),
            sleep: Vec::new(),
            step_accesses: BTreeMap::new(),
            state: None,
            choosers: BTreeSet::new(),
        }
    }
}
