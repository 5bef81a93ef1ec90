//! The default plan: a bounded exhaustive search and sampling, taking turns run by run, in
//! proportions measured on what finds bugs.
//!
//! The DFS deepens its preemption bound level by level (iterative context bounding: every
//! schedule within 0 preemptions, then 1, then 2), then searches without a bound; once a
//! search finishes without a bound cutting anything, it has explored every schedule: the plan
//! is then exhausted, a proof, and the search ends (were it asked for more runs, the samplers
//! would take every turn).
//!
//! The turns (issue 30, item 3: within 2x the runs of the best single strategy on each bug).
//! The per-run probability of finding the bug of each buggy scenario and of 867 buggy
//! generated programs was measured for random, POS and PCT at depths 2 to 10, and the run at
//! which the DFS alone finds it; a plan's median runs to its first failure follows from them,
//! so the proportions below were chosen by that calculation, then checked by running (`cargo
//! bench --bench explore`, `cargo run --release -p sim --example first_violation`). Random is
//! the best single strategy on most shallow bugs (the bind races in 2 runs, 692 of the 867
//! programs); PCT at depths 6 to 10 on the deep ones (bound-first 2x2: one run in about 3,000,
//! where random, POS and PCT at depths 2 and 3 find it in none of 100,000). So the first
//! `LATE_FROM` runs are half random and an eighth each PCT at depths 8 and 10 (PCT 8 second:
//! on the examples, held out, it finds each bug in its first run); after them, when
//! a shallow bug would most likely have been found, PCT at depths 6 and 8 has half, and PCT at
//! depths 3 and 10 an eighth each. Depth 3 is a hedge for a bug only it finds (a bug of the
//! tokio-shaped broker over TCP, `tokio-broker/tests/braid_tcp.rs`, held out of the
//! measurement, is found by PCT at depth 3 alone). Depth 10 took random's eighth: the bugs
//! random finds best fall within the first `LATE_FROM` runs (no scenario's shallow median
//! moved, and the report on 1,000 generated programs with fair yields and 1,000 without is the
//! same line for line), and on the deep bugs the late turns are for (bound-first 2x2, with and
//! without access grain) the plan went from 2.0x and 2.15x the runs of the best single strategy
//! to 1.7x and 2.0x over 100 seeds (`cargo bench --bench explore -- --quick --seeds 100`). The
//! DFS has a quarter of the turns throughout (it had half: a proof now takes four times its
//! DFS runs, not two).

use super::{
    Dfs, Pct, PickView, Random, Reduction, RunNeeds, Scheduler, SearchProgress, Stop, StrategyKind,
};
use crate::vocab::RunOutcome;
use crate::vocab::TaskId;

/// Who runs one of the plan's turns: the DFS, or a sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    Dfs,
    Random,
    Pct(usize),
}

/// The plan's turns for its first `LATE_FROM` runs, in order, repeated.
const EARLY: [Turn; 8] = [
    Turn::Random,
    Turn::Pct(8),
    Turn::Random,
    Turn::Pct(10),
    Turn::Random,
    Turn::Dfs,
    Turn::Random,
    Turn::Dfs,
];

/// The plan's turns from run `LATE_FROM` on, in order, repeated.
const LATE: [Turn; 8] = [
    Turn::Pct(8),
    Turn::Dfs,
    Turn::Pct(6),
    Turn::Pct(3),
    Turn::Pct(8),
    Turn::Dfs,
    Turn::Pct(6),
    Turn::Pct(10),
];

/// The run from which the plan takes its `LATE` turns.
const LATE_FROM: u64 = 256;

/// The PCT depths the plan samples with.
const PCT_DEPTHS: [usize; 4] = [3, 6, 8, 10];

/// The default plan's strategy (`StrategyKind::Default`): a bounded DFS, deepening level by level,
/// and sampling, taking turns run by run (see the module docs).
pub struct Plan {
    dfs: Dfs,
    random: Random,
    pct: [Pct; PCT_DEPTHS.len()],
    turn: Turn,
    /// The DFS level in progress (`None`: the unbounded search after the bounded levels), the
    /// deepest one finished, and whether a finished search cut nothing (every schedule).
    bound: Option<usize>,
    finished_bound: Option<usize>,
    complete: bool,
    reduction: Reduction,
    by_value: bool,
    no_sleep_sets: bool,
    /// Each level's DFS keeps a seeded sample of this many pruned branches, for the audit
    /// (`Dfs::sampling_pruned`): the plan reports the sample of its latest level.
    audit_sample: (usize, u64),
    /// Runs begun (one a turn), counted runs of each side, and runs the DFS levels cut short.
    turns: u64,
    dfs_runs: u64,
    sample_runs: u64,
    pruned_before: u64,
    last_counted: bool,
    last_by: StrategyKind,
}

/// The bounded levels before the unbounded search: every schedule within 0, 1 and 2
/// preemptions (where most bugs are, quickly), then all of them (which, by value, is often
/// cheaper than a deeper level).
const LAST_BOUNDED_LEVEL: usize = 2;

impl Plan {
    /// The plan: its DFS reduced by `reduction` (by value when `by_value`), its samplers seeded by
    /// `seed`, PCT's change points within `steps`.
    pub fn new(seed: u64, steps: usize, reduction: Reduction, by_value: bool) -> Self {
        let mut plan = Plan {
            dfs: Dfs::new(Some(0), reduction),
            random: Random::new(seed),
            pct: PCT_DEPTHS.map(|depth| Pct::new(seed, depth, steps)),
            turn: EARLY[0],
            bound: Some(0),
            finished_bound: None,
            complete: false,
            reduction,
            by_value,
            no_sleep_sets: false,
            audit_sample: (0, seed),
            dfs_runs: 0,
            sample_runs: 0,
            turns: 0,
            pruned_before: 0,
            last_counted: true,
            last_by: StrategyKind::Default,
        };
        plan.dfs = plan.level(Some(0));
        plan
    }

    /// Visited states without sleep sets (a model that yields fairly, see
    /// `Dfs::without_sleep_sets`).
    pub fn without_sleep_sets(mut self) -> Self {
        self.no_sleep_sets = true;
        self.dfs = self.level(self.bound);
        self
    }

    /// Each DFS level keeps a seeded sample of `keep` pruned branches, for the reduction audit
    /// (`Explorer::audit`).
    pub fn sampling_pruned(mut self, keep: usize) -> Self {
        self.audit_sample.0 = keep;
        self.dfs = self.level(self.bound);
        self
    }

    fn level(&self, bound: Option<usize>) -> Dfs {
        let (keep, seed) = self.audit_sample;
        let mut dfs = Dfs::new(bound, self.reduction).sampling_pruned(keep, seed);
        if self.by_value {
            dfs = dfs.by_value();
        }
        if self.no_sleep_sets {
            dfs = dfs.without_sleep_sets();
        }
        dfs
    }

    /// The turn of the plan's next run: the DFS's or a sampler's, by the tables above; once the
    /// DFS is complete, the samplers' turns of the same table in order, the DFS's left out (so
    /// the samplers keep their proportions to each other).
    fn next_turn(&self) -> Turn {
        let table = if self.turns < LATE_FROM {
            &EARLY
        } else {
            &LATE
        };
        if !self.complete {
            return table[(self.turns % table.len() as u64) as usize];
        }
        let mut samplers = table.iter().copied().filter(|t| *t != Turn::Dfs);
        let n = samplers.clone().count() as u64;
        samplers
            .nth((self.sample_runs % n) as usize)
            .expect("a sampler's turn")
    }

    fn active(&mut self) -> &mut dyn Scheduler {
        match self.turn {
            Turn::Dfs => &mut self.dfs,
            Turn::Random => &mut self.random,
            Turn::Pct(depth) => {
                let i = PCT_DEPTHS.iter().position(|d| *d == depth);
                &mut self.pct[i.expect("one of the plan's depths")]
            }
        }
    }

    /// The strategy of the turn in progress, as reports name it.
    fn turn_kind(&self) -> StrategyKind {
        match self.turn {
            Turn::Dfs => StrategyKind::Dfs {
                preemption_bound: self.bound,
                reduction: self.reduction,
            },
            Turn::Random => StrategyKind::Random,
            Turn::Pct(depth) => StrategyKind::Pct { depth },
        }
    }
}

impl Scheduler for Plan {
    fn begin_run(&mut self, run: u64) -> RunNeeds {
        self.turn = self.next_turn();
        self.turns += 1;
        if self.turn == Turn::Dfs {
            return self.dfs.begin_run(run);
        }
        // The samplers' own run numbers (the plan's n-th sampled run is run n of its sampler):
        // each sampled run has a random stream of its own. They never keep state by value.
        let sample_run = self.sample_runs;
        RunNeeds {
            value_state: false,
            ..self.active().begin_run(sample_run)
        }
    }

    fn pick_task(&mut self, view: &PickView<'_>) -> Result<TaskId, Stop> {
        self.active().pick_task(view)
    }

    fn pick_value(&mut self, step: usize, n: usize) -> Result<usize, Stop> {
        self.active().pick_value(step, n)
    }

    fn end_run(&mut self, run: &crate::RunResult) {
        self.active().end_run(run);
        self.last_by = self.turn_kind();
        if self.turn != Turn::Dfs {
            self.last_counted = true;
            self.sample_runs += 1;
            return;
        }
        let dfs = self.dfs.progress();
        self.last_counted = run.outcome != RunOutcome::Pruned && dfs.counts_last_run;
        if self.last_counted {
            self.dfs_runs += 1;
        }
        if dfs.exhausted {
            self.pruned_before += dfs.pruned;
            match self.bound {
                Some(k) if dfs.cut_by_bound => {
                    self.finished_bound = Some(k);
                    self.bound = (k < LAST_BOUNDED_LEVEL).then_some(k + 1);
                    self.dfs = self.level(self.bound);
                }
                _ => self.complete = true,
            }
        }
    }

    /// Every schedule explored once a DFS level finished without its bound cutting anything;
    /// the pruned runs of every level so far; the sample of the level in progress.
    fn progress(&self) -> SearchProgress<'_> {
        let dfs = self.dfs.progress();
        SearchProgress {
            exhausted: self.complete,
            pruned: self.pruned_before + if self.complete { 0 } else { dfs.pruned },
            cut_by_bound: false,
            counts_last_run: self.last_counted,
            plan: Some(PlanProgress {
                dfs_runs: self.dfs_runs,
                sample_runs: self.sample_runs,
                finished_bound: self.finished_bound,
                complete: self.complete,
                last_by: self.last_by,
            }),
            ..dfs
        }
    }
}

/// How far the plan has got (`SearchProgress::plan`).
#[derive(Clone, Copy, Debug)]
pub struct PlanProgress {
    /// Runs of the DFS, counted (not those its reduction cut short).
    pub dfs_runs: u64,
    /// Runs of the samplers.
    pub sample_runs: u64,
    /// The deepest DFS level finished: every schedule within that many preemptions.
    pub finished_bound: Option<usize>,
    /// A level finished without its bound cutting anything: every schedule.
    pub complete: bool,
    /// The strategy of the last run: the DFS at its level's bound, or the sampler.
    pub last_by: StrategyKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turns of the plan's first `runs` runs, the DFS never finishing (or, with
    /// `complete`, already finished).
    fn turns(runs: u64, complete: bool) -> Vec<Turn> {
        let mut plan = Plan::new(1, 100, Reduction::None, false);
        plan.complete = complete;
        (0..runs)
            .map(|_| {
                let turn = plan.next_turn();
                plan.turns += 1;
                if turn != Turn::Dfs {
                    plan.sample_runs += 1;
                }
                turn
            })
            .collect()
    }

    fn share(turns: &[Turn], of: Turn) -> f64 {
        turns.iter().filter(|t| **t == of).count() as f64 / turns.len() as f64
    }

    /// The proportions the README and the module docs state.
    #[test]
    fn the_turns_keep_the_stated_proportions() {
        let all = turns(LATE_FROM + 1024, false);
        let (early, late) = all.split_at(LATE_FROM as usize);
        assert_eq!(early[0], Turn::Random, "the first run samples");
        assert_eq!(share(early, Turn::Dfs), 0.25);
        assert_eq!(share(early, Turn::Random), 0.5);
        assert_eq!(share(early, Turn::Pct(8)), 0.125);
        assert_eq!(share(early, Turn::Pct(10)), 0.125);
        assert_eq!(share(late, Turn::Dfs), 0.25);
        assert_eq!(share(late, Turn::Pct(6)), 0.25);
        assert_eq!(share(late, Turn::Pct(8)), 0.25);
        assert_eq!(share(late, Turn::Pct(3)), 0.125);
        assert_eq!(share(late, Turn::Pct(10)), 0.125);
        assert_eq!(share(late, Turn::Random), 0.0);
    }

    /// Once the DFS has proved everything, the samplers take its turns, in their own order.
    #[test]
    fn a_complete_dfs_gives_every_turn_to_the_samplers() {
        let all = turns(LATE_FROM + 64, true);
        assert!(all.iter().all(|t| *t != Turn::Dfs));
        let early: Vec<Turn> = EARLY.iter().copied().filter(|t| *t != Turn::Dfs).collect();
        assert_eq!(&all[..early.len()], &early[..]);
        // Four of the six sampled turns of `EARLY` (256 runs are not whole cycles of six).
        assert!((share(&all[..LATE_FROM as usize], Turn::Random) - 4.0 / 6.0).abs() < 0.01);
    }

    /// Every sampled turn is of a depth the plan has a sampler for.
    #[test]
    fn every_pct_turn_has_its_sampler() {
        for turn in EARLY.iter().chain(LATE.iter()) {
            if let Turn::Pct(depth) = turn {
                assert!(PCT_DEPTHS.contains(depth), "depth {depth}");
            }
        }
    }
}
