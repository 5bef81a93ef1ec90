//! Follows a recorded decision list. A recorded task that is not enabled (or a recorded value out
//! of range) is a divergence naming the step. (The shrinker's lenient counterpart is `Guided`.)

use std::collections::HashMap;

use super::livelock::{self, PathStep};
use super::{PickView, RunNeeds, Scheduler, Stop};
use crate::schedule::{Decision, Divergence};
use crate::vocab::TaskId;

/// Follows a recorded decision list strictly (see the module docs).
pub struct Replay {
    decisions: Vec<Decision>,
    next: usize,
    /// Watch the run's states by value for a fair cycle, as DFS by value does (a livelock
    /// found by DFS replays to the same violation at the same step).
    watch_states: bool,
    /// States by value met so far, and the step at which each was first met.
    seen: HashMap<u64, usize>,
    /// The tasks enabled at each step so far, and the one picked.
    path: Vec<(Vec<TaskId>, usize)>,
    /// The state by value at each step so far.
    states: Vec<u64>,
    /// Going round a fair cycle a second time, as DFS does to confirm it: the step the cycle
    /// starts at, and its length.
    confirming: Option<(usize, usize)>,
}

impl Replay {
    /// Follows `decisions` exactly; anything else is a divergence.
    pub fn strict(decisions: Vec<Decision>) -> Self {
        Replay {
            decisions,
            next: 0,
            watch_states: false,
            seen: HashMap::new(),
            path: Vec::new(),
            states: Vec::new(),
            confirming: None,
        }
    }

    /// Also reports a livelock where the run comes back to a state by a fair cycle: for models
    /// that declare their state visible (`Model::state_visible`), whose DFS does the same.
    pub fn watching_states(mut self, on: bool) -> Self {
        self.watch_states = on;
        self
    }

    /// Watches the state at this step for a fair cycle (see `livelock.rs`): going round it a
    /// second time the same way is a livelock; another way, hidden state.
    fn watch(&mut self, view: &PickView<'_>) -> Result<(), Stop> {
        let Some(state) = view.state() else {
            return Ok(());
        };
        let step = self.path.len();
        if let Some((start, len)) = self.confirming {
            let k = step - (start + len);
            if state != self.states[start + k % len] {
                return Err(Stop::HiddenState(livelock::hidden_state(start, view.step)));
            }
            if k == len {
                let ran: Vec<&str> = self.path[start..start + len]
                    .iter()
                    .map(|(_, t)| view.name(TaskId(*t)))
                    .collect();
                return Err(Stop::Livelock(livelock::message(start, view.step, &ran)));
            }
        } else if let Some(&start) = self.seen.get(&state) {
            let cycle = self.path[start..].iter().map(|(enabled, chosen)| PathStep {
                enabled,
                chosen: *chosen,
            });
            if livelock::is_fair(cycle) {
                self.confirming = Some((start, step - start));
            }
        }
        self.seen.entry(state).or_insert(step);
        self.states.push(state);
        Ok(())
    }

    fn enabled_names(view: &PickView<'_>) -> String {
        let names: Vec<&str> = view.enabled.iter().map(|t| view.name(*t)).collect();
        format!("[{}]", names.join(", "))
    }
}

impl Scheduler for Replay {
    fn begin_run(&mut self, _run: u64) -> RunNeeds {
        self.next = 0;
        self.seen.clear();
        self.path.clear();
        self.states.clear();
        self.confirming = None;
        RunNeeds {
            value_state: self.watch_states,
            ..RunNeeds::SEARCH
        }
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        if self.watch_states {
            self.watch(view)?;
        }
        let recorded = self.decisions.get(self.next);
        self.next += 1;
        let found = match recorded {
            Some(Decision::Task(name)) => view.enabled.iter().find(|t| view.name(**t) == &**name),
            _ => None,
        };
        match found {
            Some(task) => {
                if self.watch_states {
                    self.path.push((view.enabled.to_vec(), task.0));
                }
                Ok(*task)
            }
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
            Some(Decision::Choice { choose, .. }) if choose < n => {
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
