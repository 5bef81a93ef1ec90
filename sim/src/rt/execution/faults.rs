//! The run's fault budget (resets, partitions, datagram losses) and its fault sites (see
//! `sim::fault`): each armed site is a task the strategy may pick, while faults are left.

use super::Execution;
use crate::rt::op::{ObjState, Op};
use crate::rt::task::TaskState;
use crate::vocab::TaskId;

#[derive(Default)]
pub(crate) struct Faults {
    /// How many more faults the run may inject at its fault sites.
    left: usize,
    /// Fault sites started in the run.
    sites: usize,
}

impl Faults {
    /// Lets the run inject up to `faults` faults (`Model::network_faults`).
    pub(crate) fn allow(&mut self, faults: usize) {
        self.left = faults;
    }

    pub(crate) fn left(&self) -> usize {
        self.left
    }

    /// A fault struck.
    pub(crate) fn spend(&mut self) {
        self.left = self.left.saturating_sub(1);
    }

    /// A fault site started.
    pub(crate) fn site_started(&mut self) {
        self.sites += 1;
    }

    pub(crate) fn sites(&self) -> usize {
        self.sites
    }
}

impl Execution {
    /// Adds the fault sites that are armed, after the tasks proper (as crashes).
    pub(super) fn enable_faults(&mut self, enabled: &mut Vec<TaskId>) {
        for (i, task) in self.tasks.iter().enumerate() {
            let TaskState::Parked(Op::Fault(obj)) = task.state else {
                continue;
            };
            let armed = matches!(
                self.objects[obj.0].state,
                ObjState::FaultSite { armed: true }
            );
            if armed {
                enabled.push(TaskId(i));
            }
        }
    }

    pub(crate) fn faults(&self) -> &Faults {
        &self.faults
    }

    pub(crate) fn faults_mut(&mut self) -> &mut Faults {
        &mut self.faults
    }
}
