//! Minimisation: from a failing schedule, find one with as few preemptions as possible that
//! still breaks the same invariant. Re-runs in guided mode (follow the schedule's context
//! switches where they still apply, otherwise do not preempt), and drops preemptions — first in
//! halves, then one by one — until no single remaining preemption can be dropped (1-minimal);
//! then, while cheap, searches all schedules with fewer context switches for a smaller one.
//! The run ends at the violation, so the schedule is truncated there.

use std::cell::Cell;
use std::collections::BTreeSet;

use crate::model::Model;
use crate::run::{run_once, RunConfig, RunResult};
use crate::schedule::Decision;
use crate::strategy::{Guided, Switches};

/// What shrinking did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub before_steps: usize,
    pub before_preemptions: usize,
    /// The minimised run (its decisions replay strictly).
    pub run: RunResult,
    /// Guided runs tried.
    pub attempts: usize,
}

/// Upper bound on guided runs per shrink; each is a few microseconds.
const MAX_ATTEMPTS: usize = 20_000;

pub fn shrink(model: &dyn Model, failing: &RunResult, config: &RunConfig) -> Shrunk {
    let invariant = failing
        .violation()
        .map(|v| v.invariant.clone())
        .expect("shrink needs a failing run");
    let config = RunConfig {
        trace: false,
        ..*config
    };
    let attempts = Cell::new(0);
    let try_run = |switches: Switches| -> Option<RunResult> {
        attempts.set(attempts.get() + 1);
        let r = run_once(model, Box::new(Guided::new(switches)), 0, &config).0;
        r.violation()
            .is_some_and(|v| v.invariant == invariant)
            .then_some(r)
    };
    // The guided re-run of the original schedule is the starting point (it may already differ
    // after the violation, where the original was cut).
    let mut best =
        try_run(Switches::from_decisions(&failing.decisions())).unwrap_or_else(|| failing.clone());
    while attempts.get() < MAX_ATTEMPTS {
        // Coarse pass: drop half of the remaining preemptions at a time, then quarters, ...
        let mut chunk = best.preempted_steps.len() / 2;
        while chunk >= 1 && attempts.get() < MAX_ATTEMPTS {
            let steps = best.preempted_steps.clone();
            let mut improved = false;
            for group in steps.chunks(chunk) {
                let mut switches = Switches::from_decisions(&best.decisions());
                for s in group {
                    switches.at.remove(s);
                }
                if let Some(r) = try_run(switches).filter(|r| r.preemptions < best.preemptions) {
                    best = r;
                    improved = true;
                    break;
                }
            }
            if !improved {
                chunk /= 2;
            }
        }
        // Fine pass: any single preemption whose removal still fails (without adding
        // preemptions elsewhere) is dropped, so the result is 1-minimal when the loop ends on
        // its own (the attempt cap guards against cycles between equal counts).
        let dropped = best.preempted_steps.clone().into_iter().find_map(|step| {
            try_run(without_preemption(&best.decisions(), step))
                .filter(|r| r.preemptions <= best.preemptions)
        });
        if let Some(r) = dropped {
            best = r;
            continue;
        }
        // Escape: a non-preemptive switch (who ran first, who ran after a task blocked) may be
        // what forces the preemptions; drop one if that lowers the count.
        let switches: Vec<usize> = Switches::from_decisions(&best.decisions())
            .at
            .into_keys()
            .collect();
        let escape = switches.into_iter().find_map(|step| {
            try_run(without_preemption(&best.decisions(), step))
                .filter(|r| r.preemptions < best.preemptions)
        });
        if let Some(r) = escape {
            best = r;
            continue;
        }
        // Last: search the schedules with fewer context switches outright, while that is cheap.
        match fewer_switches(&best, &try_run) {
            Some(r) => best = r,
            None => break,
        }
    }
    Shrunk {
        before_steps: failing.steps,
        before_preemptions: failing.preemptions,
        run: best,
        attempts: attempts.get(),
    }
}

/// Candidate schedules tried per switch count by `fewer_switches`.
const ENUMERATION_BUDGET: usize = 20_000;

/// Tries every schedule of k context switches (at any step, to any task of the run) for
/// k = 1, 2, ... below `best`'s preemption count, while there are at most
/// `ENUMERATION_BUDGET` of them; returns the first that still fails with fewer preemptions.
fn fewer_switches(
    best: &RunResult,
    try_run: &dyn Fn(Switches) -> Option<RunResult>,
) -> Option<RunResult> {
    let decisions = best.decisions();
    let names: BTreeSet<&str> = decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Task(name) => Some(&**name),
            Decision::Choice { .. } => None,
        })
        .collect();
    let choices = Switches::from_decisions(&decisions).choices;
    let slots: Vec<(usize, &str)> = (0..best.steps)
        .flat_map(|step| names.iter().map(move |n| (step, *n)))
        .collect();
    for k in 1..best.preemptions {
        if slots.len().saturating_pow(k as u32) > ENUMERATION_BUDGET {
            break;
        }
        let mut picked = Vec::with_capacity(k);
        if let Some(r) = enumerate(&slots, 0, k, &mut picked, &mut |picked| {
            let switches = Switches {
                at: picked.iter().map(|(s, n)| (*s, n.to_string())).collect(),
                choices: choices.clone(),
            };
            try_run(switches).filter(|r| r.preemptions < best.preemptions)
        }) {
            return Some(r);
        }
    }
    None
}

/// A choice of context switches: (step, task) at strictly increasing steps.
type Slots<'a> = [(usize, &'a str)];

/// Calls `f` on every choice of `k` slots at strictly increasing steps, from `from` on.
fn enumerate<'a, R>(
    slots: &[(usize, &'a str)],
    from: usize,
    k: usize,
    picked: &mut Vec<(usize, &'a str)>,
    f: &mut dyn FnMut(&Slots<'a>) -> Option<R>,
) -> Option<R> {
    if k == 0 {
        return f(picked);
    }
    for i in from..slots.len() {
        if picked.last().is_some_and(|(s, _)| *s >= slots[i].0) {
            continue;
        }
        picked.push(slots[i]);
        let found = enumerate(slots, i + 1, k - 1, picked, f);
        picked.pop();
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The decisions of `run` with the context switch at `step` removed, as a guided schedule.
pub fn without_preemption(decisions: &[Decision], step: usize) -> Switches {
    let mut switches = Switches::from_decisions(decisions);
    switches.at.remove(&step);
    switches
}
