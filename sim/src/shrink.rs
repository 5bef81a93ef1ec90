//! Minimisation: from a failing schedule, find one with as few preemptions as possible that
//! still breaks the same invariant. Re-runs in guided mode (follow the schedule's context
//! switches where they still apply, otherwise do not preempt), and drops preemptions — first in
//! halves, then one by one — until no single remaining preemption can be dropped (1-minimal);
//! then, while cheap, searches all schedules with fewer context switches for a smaller one.
//! A 1-minimal schedule can still sit above the bug's depth (a race that needs 3 preemptions
//! shrinks to 5 when no single one of the 5 can go), so the shrinker then runs bounded DFS
//! below the count (bound = count - 1, then lower), within a budget: a bound whose search is
//! exhaustive and finds nothing proves the count minimum. The run ends at the violation, so
//! the schedule is truncated there.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::explore::Explorer;
use crate::model::Model;
use crate::run::{run_once, RunConfig, RunResult};
use crate::schedule::Decision;
use crate::strategy::{Guided, Reduction, Replay, StrategyKind, Switches};

/// What is known of a shrunk schedule's preemption count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Minimality {
    /// No schedule with fewer preemptions breaks the invariant: a bounded DFS one below the
    /// count was exhaustive and found none (or the count is 0). A run ends at its first
    /// violation, so "breaks" means "ends with a violation of this invariant".
    #[serde(rename = "minimum")]
    Minimum,
    /// No single preemption can be dropped, but the search below the count ran out of budget:
    /// a schedule with fewer preemptions may exist.
    #[serde(rename = "1-minimal")]
    OneMinimal,
}

impl Minimality {
    /// The word reports and replay files use: `minimum` or `1-minimal`.
    pub fn name(self) -> &'static str {
        match self {
            Minimality::Minimum => "minimum",
            Minimality::OneMinimal => "1-minimal",
        }
    }
}

impl std::fmt::Display for Minimality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How hard the shrinker searches below a 1-minimal count.
///
/// The budget is deterministic: DFS runs, summed over the bounded searches, so that the same
/// failing run shrinks to the same schedule, and a replay file is the same file, on any
/// machine. `time` is only a safety cap: when it, not `runs`, ends a search, the result
/// depends on the machine's speed (`Shrunk::timed_out` says so).
///
/// The runs are those `Explorer` counts, which leaves out the runs a reduction cuts short as
/// equivalent to an explored schedule; under visited states these can outnumber the counted
/// ones a thousandfold, so a counted run's cost varies by model: about 30 ms on the broker's
/// access-grain scenarios (DFS by value, ~1000 pruned runs each), 70 us on the relay's
/// (no reduction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShrinkOptions {
    /// DFS runs for all the searches below the 1-minimal count; 0 skips them.
    pub runs: u64,
    /// Wall-time cap on those searches, together.
    pub time: Duration,
}

impl ShrinkOptions {
    /// No search below the 1-minimal count: the shrinker as it was, a few milliseconds.
    pub const ONE_MINIMAL: ShrinkOptions = ShrinkOptions {
        runs: 0,
        time: Duration::ZERO,
    };
}

impl Default for ShrinkOptions {
    /// 2000 DFS runs, capped at 30 s. On the broker's 3-preemption bind race
    /// (`broker-unbound-behind-access`), the searches from a 1-minimal 4-10 preemptions down to
    /// the proof at bound 2 take 106 runs and 1-5 s (release build, up to 7.5 s on a loaded
    /// machine: the cap sits well above, so that the run budget, not the machine, decides);
    /// 2000 relay runs take about 0.15 s.
    fn default() -> Self {
        ShrinkOptions {
            runs: 2000,
            time: Duration::from_secs(30),
        }
    }
}

/// What shrinking did.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// Steps in the failing run before shrinking.
    pub before_steps: usize,
    /// Preemptions in the failing run before shrinking.
    pub before_preemptions: usize,
    /// The minimised run (its decisions replay strictly).
    pub run: RunResult,
    /// Whether `run.preemptions` is proved the least for this invariant.
    pub minimality: Minimality,
    /// Guided runs tried.
    pub attempts: usize,
    /// DFS runs spent searching below the 1-minimal count, and the bounds searched.
    pub dfs_runs: u64,
    /// The preemption bounds the DFS searched below the 1-minimal count.
    pub dfs_bounds: Vec<usize>,
    /// The time cap, not the run budget, ended a search (the result may vary by machine).
    pub timed_out: bool,
}

/// Upper bound on guided runs per shrink; each is a few microseconds.
const MAX_ATTEMPTS: usize = 20_000;

/// Shrinks with the default options.
pub fn shrink(model: &dyn Model, failing: &RunResult, config: &RunConfig) -> Shrunk {
    shrink_with(model, failing, config, ShrinkOptions::default())
}

/// Shrinks `failing` to a 1-minimal schedule breaking the same invariant, then searches below
/// its count by bounded DFS within `options`' budget (see the module docs).
pub fn shrink_with(
    model: &dyn Model,
    failing: &RunResult,
    config: &RunConfig,
    options: ShrinkOptions,
) -> Shrunk {
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
    let start =
        try_run(Switches::from_decisions(&failing.decisions())).unwrap_or_else(|| failing.clone());
    let start = fewer_faults(start, &try_run);
    let mut best = weaker_draws(one_minimal(start, &try_run, &attempts), &try_run);
    // Below the 1-minimal count: bounded DFS at count - 1, then lower.
    let started = Instant::now();
    let mut runs_left = options.runs;
    let mut dfs_bounds = Vec::new();
    let mut timed_out = false;
    let minimality = loop {
        if best.preemptions == 0 {
            break Minimality::Minimum;
        }
        let time_left = options.time.saturating_sub(started.elapsed());
        if runs_left == 0 || time_left.is_zero() {
            timed_out |= runs_left > 0;
            break Minimality::OneMinimal;
        }
        let bound = best.preemptions - 1;
        dfs_bounds.push(bound);
        let search = search_below(model, &invariant, bound, runs_left, time_left, &config);
        runs_left = runs_left.saturating_sub(search.runs);
        match search.found {
            Some(found) => {
                // Replayed under this shrink's configuration, then through the 1-minimal pass
                // again (the search's schedule need not be 1-minimal).
                let replayed = run_once(model, Box::new(Replay::strict(found)), 0, &config).0;
                let Some(r) = replayed
                    .violation()
                    .is_some_and(|v| v.invariant == invariant)
                    .then_some(replayed)
                    .filter(|r| r.preemptions < best.preemptions)
                else {
                    // Cannot happen for a deterministic model; stop searching rather than loop.
                    break Minimality::OneMinimal;
                };
                best = weaker_draws(one_minimal(r, &try_run, &attempts), &try_run);
            }
            None if search.exhaustive => break Minimality::Minimum,
            None => {
                timed_out |= search.timed_out;
                break Minimality::OneMinimal;
            }
        }
    };
    Shrunk {
        before_steps: failing.steps,
        before_preemptions: failing.preemptions,
        run: best,
        minimality,
        attempts: attempts.get(),
        dfs_runs: options.runs - runs_left,
        dfs_bounds,
        timed_out,
    }
}

/// One bounded DFS below a 1-minimal count.
struct Below {
    /// The decisions of a run with at most `bound` preemptions that breaks the invariant.
    found: Option<Vec<Decision>>,
    /// The search covered every schedule within the bound.
    exhaustive: bool,
    runs: u64,
    timed_out: bool,
}

/// Searches the schedules with at most `bound` preemptions for one that breaks `invariant`,
/// within `runs` DFS runs and `time`. The search stops at its first violation; when that is of
/// another invariant it is run again to the end (of the space or of the budget), for this one.
fn search_below(
    model: &dyn Model,
    invariant: &str,
    bound: usize,
    runs: u64,
    time: Duration,
    config: &RunConfig,
) -> Below {
    let started = Instant::now();
    let strategy = StrategyKind::Dfs {
        preemption_bound: Some(bound),
        reduction: Reduction::for_search(Some(bound), model.state_visible()),
    };
    let search = |stop_on_first: bool, runs: u64, time: Duration| {
        Explorer::new(model)
            .strategy(strategy)
            .max_steps(config.max_steps)
            .runs(runs)
            .time(time)
            .stop_on_first(stop_on_first)
            .run()
    };
    let mut below = Below {
        found: None,
        exhaustive: false,
        runs: 0,
        timed_out: false,
    };
    let mut stop_on_first = true;
    loop {
        let time_left = time.saturating_sub(started.elapsed());
        let runs_left = runs - below.runs;
        // A search that fails (a diverging run: a strategy bug) proves nothing.
        let Ok(summary) = search(stop_on_first, runs_left, time_left) else {
            return below;
        };
        below.runs += summary.runs;
        if let Some(f) = summary.violations.iter().find(|f| f.invariant == invariant) {
            below.found = Some(f.run.decisions());
            return below;
        }
        if summary.finished() {
            below.exhaustive = true;
            return below;
        }
        if !stop_on_first || summary.violations.is_empty() || below.runs >= runs {
            // Out of budget: runs, or time when runs were left.
            below.timed_out = below.runs < runs;
            return below;
        }
        // Stopped on another invariant's violation: search again, to the end.
        stop_on_first = false;
    }
}

/// Drops preemptions from `best` by guided re-runs until no single one can go (or the attempt
/// cap is reached).
fn one_minimal(
    mut best: RunResult,
    try_run: &dyn Fn(Switches) -> Option<RunResult>,
    attempts: &Cell<usize>,
) -> RunResult {
    // Nothing to drop below 0 preemptions (and a long livelock has thousands of switches the
    // escape pass below would try one by one).
    while attempts.get() < MAX_ATTEMPTS && best.preemptions > 0 {
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
        match fewer_switches(&best, try_run) {
            Some(r) => best = r,
            None => break,
        }
    }
    best
}

/// Faults first: drops each intervention (a crash, a reset, a partition, a clock jump) the
/// failure does not need, before any plain preemption is tried.
fn fewer_faults(mut best: RunResult, try_run: &dyn Fn(Switches) -> Option<RunResult>) -> RunResult {
    let faults = |r: &RunResult| r.interventions.len();
    let mut i = 0;
    while i < best.interventions.len() {
        let step = best.interventions[i].0;
        match try_run(without_preemption(&best.decisions(), step))
            .filter(|r| faults(r) < faults(&best) && r.preemptions <= best.preemptions)
        {
            Some(r) => best = r,
            None => i += 1,
        }
    }
    best
}

/// Weakens what was drawn within a step to the lowest value that still fails (a draw's values
/// go from its weakest outcome up: a write kept whole, lost, torn).
fn weaker_draws(mut best: RunResult, try_run: &dyn Fn(Switches) -> Option<RunResult>) -> RunResult {
    for ordinal in best.drawn() {
        let drawn = Switches::from_decisions(&best.decisions())
            .choices
            .get(ordinal)
            .copied();
        for weaker in 0..drawn.unwrap_or(0) {
            let mut switches = Switches::from_decisions(&best.decisions());
            switches.choices[ordinal] = weaker;
            if let Some(r) = try_run(switches).filter(|r| r.preemptions <= best.preemptions) {
                best = r;
                break;
            }
        }
    }
    best
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
