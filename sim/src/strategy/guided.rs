//! The shrinker's strategy: context switches at given steps, and otherwise no preemption — keep
//! running the current task while it is enabled, else the first enabled task in spawn order.
//! Choice values are taken in order from a list (0 once it runs out).

use std::collections::BTreeMap;

use super::{PickView, RunNeeds, Scheduler, Stop};
use crate::schedule::Decision;
use crate::vocab::TaskId;

/// Where a guided run switches tasks, and the values it takes for choices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// Step -> the task to switch to there.
    pub at: BTreeMap<usize, String>,
    /// Values for the run's `choose` calls, in order.
    pub choices: Vec<usize>,
}

impl Switches {
    /// The switches and choices of a recorded schedule: every step whose task differs from the
    /// previous step's.
    pub fn from_decisions(decisions: &[Decision]) -> Self {
        let mut switches = Switches::default();
        let mut step = 0;
        let mut prev: Option<&str> = None;
        for d in decisions {
            match d {
                Decision::Task(name) => {
                    if prev != Some(&**name) {
                        switches.at.insert(step, name.to_string());
                    }
                    prev = Some(name);
                    step += 1;
                }
                Decision::Choice { choose, .. } => switches.choices.push(*choose),
            }
        }
        switches
    }
}

/// The shrinker's strategy (see the module docs).
pub struct Guided {
    switches: Switches,
    next_choice: usize,
}

impl Guided {
    /// A strategy that follows `switches` and otherwise keeps running the current task.
    pub fn new(switches: Switches) -> Self {
        Guided {
            switches,
            next_choice: 0,
        }
    }
}

impl Scheduler for Guided {
    fn begin_run(&mut self, _run: u64) -> RunNeeds {
        self.next_choice = 0;
        RunNeeds::SEARCH
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        if let Some(name) = self.switches.at.get(&view.step) {
            if let Some(t) = view.enabled.iter().find(|t| view.name(**t) == name) {
                return Ok(*t);
            }
        }
        Ok(match view.current {
            Some(cur) if view.enabled.contains(&cur) => cur,
            _ => view.enabled[0],
        })
    }

    fn pick_value(&mut self, _step: usize, n: usize) -> Result<usize, Stop> {
        let v = self
            .switches
            .choices
            .get(self.next_choice)
            .copied()
            .unwrap_or(0);
        self.next_choice += 1;
        Ok(if v < n { v } else { 0 })
    }
}
