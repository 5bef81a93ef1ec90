//! Follows a recorded decision list. A recorded task that is not enabled (or a recorded value out
//! of range) is a divergence naming the step. (The shrinker's lenient counterpart is `Guided`.)

use super::{PickView, Stop, Strategy};
use crate::rt::TaskId;
use crate::schedule::{Decision, Divergence};

pub struct Replay {
    decisions: Vec<Decision>,
    next: usize,
}

impl Replay {
    /// Follows `decisions` exactly; anything else is a divergence.
    pub fn strict(decisions: Vec<Decision>) -> Self {
        Replay { decisions, next: 0 }
    }

    fn enabled_names(view: &PickView<'_>) -> String {
        let names: Vec<&str> = view.enabled.iter().map(|t| view.name(*t)).collect();
        format!("[{}]", names.join(", "))
    }
}

impl Strategy for Replay {
    fn begin_run(&mut self, _run: u64) {
        self.next = 0;
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        let recorded = self.decisions.get(self.next);
        self.next += 1;
        let found = match recorded {
            Some(Decision::Task(name)) => view.enabled.iter().find(|t| view.name(**t) == &**name),
            _ => None,
        };
        match found {
            Some(task) => Ok(*task),
            None => Err(Stop::Diverged(Divergence {
                step: view.step,
                expected: match recorded {
                    Some(d) => format!("task {d}"),
                    None => "end of schedule".to_string(),
                },
                found: format!("enabled {}", Self::enabled_names(view)),
            })),
        }
    }

    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Stop> {
        let recorded = self.decisions.get(self.next).cloned();
        match recorded {
            Some(Decision::Choice { choose }) if choose < n => {
                self.next += 1;
                Ok(choose)
            }
            other => Err(Stop::Diverged(Divergence {
                step,
                expected: match other {
                    Some(d) => d.to_string(),
                    None => "end of schedule".to_string(),
                },
                found: format!("choose(0..{n})"),
            })),
        }
    }
}
