//! Livelocks in a search by state: a schedule that comes back to a state on its own path can go
//! round that cycle forever. Only a *fair* cycle is a livelock (Musuvathi & Qadeer, "Fair
//! stateless model checking", PLDI 2008): one in which every task that stays enabled all the way
//! round takes a step. An unfair cycle starves a task that could run; the search explores that
//! task from the cycle's first state instead, so the cycle itself is cut, not reported.

use crate::vocab::TaskId;

/// One step of a path: the tasks enabled before it, and the one that took it.
pub(crate) struct PathStep<'a> {
    pub enabled: &'a [TaskId],
    pub chosen: usize,
}

/// Whether the cycle made of `steps` (from the repeated state back to it) is fair: every task
/// enabled at each of its states takes a step in it.
pub(crate) fn is_fair<'a>(steps: impl IntoIterator<Item = PathStep<'a>>) -> bool {
    let mut steps = steps.into_iter();
    let Some(first) = steps.next() else {
        return false;
    };
    let mut always: Vec<usize> = first.enabled.iter().map(|t| t.0).collect();
    let mut ran = vec![first.chosen];
    for s in steps {
        always.retain(|t| s.enabled.iter().any(|e| e.0 == *t));
        ran.push(s.chosen);
    }
    always.iter().all(|t| ran.contains(t))
}

/// The violation's message: where the cycle starts and who went round it (twice: `now` is the
/// end of the second round, which confirmed the first).
pub(crate) fn message(start: usize, now: usize, ran: &[&str]) -> String {
    let mut ran = ran.to_vec();
    ran.sort_unstable();
    ran.dedup();
    format!(
        "the run came back to its state of step {start} after {} more steps ({}), with every \
         task that could run taking a turn, and went round the same way again: a fair cycle \
         that makes no progress",
        (now - start) / 2,
        ran.join(", ")
    )
}

/// The name of the violation a cycle that does not repeat is reported as.
pub(crate) const HIDDEN_STATE: &str = "hidden-state";

/// A state by value came back, but the second time round the cycle reached a state the first
/// did not: the model keeps state the engine cannot see, against what it declared.
pub(crate) fn hidden_state(start: usize, now: usize) -> String {
    format!(
        "the run came back to its state of step {start}, but going round the same decisions \
         again reached, at step {now}, a state the first round did not: the model keeps state \
         the engine cannot see (a loop local missing from its sim::checkpoint, or a value shared \
         outside engine objects), which breaks Model::state_visible"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_that_starves_an_enabled_task_is_unfair() {
        let both = [TaskId(0), TaskId(1)];
        let spin = || PathStep {
            enabled: &both,
            chosen: 0,
        };
        assert!(!is_fair([spin(), spin()]));
        let other = PathStep {
            enabled: &both,
            chosen: 1,
        };
        assert!(is_fair([spin(), other]));
        // A task blocked somewhere in the cycle need not run in it.
        let alone = [TaskId(0)];
        assert!(is_fair([
            spin(),
            PathStep {
                enabled: &alone,
                chosen: 0
            }
        ]));
    }
}
