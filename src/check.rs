//! `braid::check`: explore a test body's schedules, in the style of stateright's checker
//! builder. `#[braid::test]` is this with the test's name and file filled in.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use sim::explore::{Explorer, SearchVerdict};
use sim::strategy::StrategyKind;
use sim::Grain;

use crate::audit::{self, Finding};
use crate::failure::{self, TestInfo};
use crate::outcome::{Outcome, Regression, Report, Status};
use crate::regressions;
use crate::settings::Settings;
use crate::shard::ShardSummary;
use crate::test_model::TestModel;

/// Explores every schedule it can of `body`, run as the main task of each run.
///
/// ```
/// use std::sync::Arc;
///
/// let report = braid::check(|| async {
///     let counter = Arc::new(braid::sync::Mutex::new(0u32));
///     let c = counter.clone();
///     let task = braid::spawn(async move {
///         let v = *c.lock().await;
///         *c.lock().await = v + 1;
///     });
///     let v = *counter.lock().await;
///     *counter.lock().await = v + 1;
///     task.await.unwrap();
///     assert_eq!(*counter.lock().await, 2, "an update was lost");
/// })
/// .runs(1_000)
/// .run();
/// let failure = report.failure().expect("braid finds the lost update");
/// assert!(failure.message.contains("an update was lost"));
/// ```
pub fn check<F, Fut>(body: F) -> Check
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Check {
        model: TestModel::new(body),
        settings: Settings::default(),
        test: None,
    }
}

/// The strategies braid explores schedules with: `Default` (the plan), `Random`,
/// `Pct { depth }`, `Portfolio`, and `dfs(preemption_bound)` for a proof.
///
/// ```
/// use braid::Strategy;
///
/// let report = braid::check(|| async {}).strategy(Strategy::dfs(None)).run();
/// assert!(matches!(report.outcome, braid::Outcome::Holds { exhaustive: true, .. }));
/// ```
pub type Strategy = StrategyKind;

/// A check of one test body, configured with builder calls and run with [`Check::run`] or
/// [`Check::assert_holds`].
///
/// ```
/// use braid::Strategy;
///
/// braid::check(|| async {
///     let t = braid::spawn(async { 2 });
///     assert_eq!(t.await.unwrap(), 2);
/// })
/// .strategy(Strategy::Random)
/// .seed(7)
/// .runs(500)
/// .assert_holds();
/// ```
pub struct Check {
    model: TestModel,
    settings: Settings,
    test: Option<TestInfo>,
}

impl Check {
    /// How schedules are explored. Default: [`Strategy::Default`], a bounded exhaustive search
    /// (DFS with iterative context bounding) and sampling (random, then mostly PCT at depths 6
    /// to 10) taking turns run by run.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.settings.strategy = strategy;
        self
    }

    /// Searches shard `index` (1-based) of `count` of the runs, and writes the shard's summary
    /// to `<out>/shards/<name>.<index>-of-<count>.json` for `braid merge` (`BRAID_SHARD=i/n`
    /// overrides; README, "Tests across machines"). Panics unless 1 <= index <= count.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("braid-doc-shard");
    /// let report = braid::check(|| async {}).name("empty").shard(2, 3).out(&dir).run();
    /// assert!(matches!(report.outcome, braid::Outcome::Holds { .. }));
    /// assert!(dir.join("shards/empty.2-of-3.json").exists());
    /// ```
    pub fn shard(mut self, index: u64, count: u64) -> Self {
        assert!(
            1 <= index && index <= count,
            "braid: shard {index} of {count}: need 1 <= index <= count"
        );
        self.settings.shard = Some(crate::settings::Shard { index, count });
        self
    }

    /// The exploration seed (default 1; `BRAID_SEED` overrides).
    pub fn seed(mut self, seed: u64) -> Self {
        self.settings.seed = seed;
        self
    }

    /// At most this many runs (default 10,000 when no time is given; `BRAID_RUNS` overrides).
    pub fn runs(mut self, runs: u64) -> Self {
        assert!(runs > 0, "braid: a run budget must be at least 1");
        self.settings.runs = Some(runs);
        self
    }

    /// At most this much wall time (`BRAID_TIME`, in seconds, overrides).
    pub fn time(mut self, time: Duration) -> Self {
        assert!(!time.is_zero(), "braid: a time budget must be more than 0");
        self.settings.time = Some(time);
        self
    }

    /// The step bound (default 10,000). A run past it whose tasks have gone round in yields
    /// for its last half is a `livelock`; a run that does not yield goes on up to 100 times
    /// the bound, and is a `step-bound` violation past that (an endless loop that never yields).
    ///
    /// ```
    /// // 20 steps of straight-line channel work are not a livelock under a bound of 5.
    /// braid::check(|| async {
    ///     let (tx, rx) = braid::sync::mpsc::channel(1);
    ///     for i in 0..10 {
    ///         tx.send(i).await;
    ///         assert_eq!(rx.recv().await, i);
    ///     }
    /// })
    /// .max_steps(5)
    /// .runs(10)
    /// .assert_holds();
    ///
    /// // 600 such steps are past 100 times the bound: the run is cut.
    /// let report = braid::check(|| async {
    ///     let (tx, rx) = braid::sync::mpsc::channel(1);
    ///     for i in 0..300 {
    ///         tx.send(i).await;
    ///         rx.recv().await;
    ///     }
    /// })
    /// .max_steps(5)
    /// .runs(1)
    /// .out(std::env::temp_dir().join("braid-doc-max-steps"))
    /// .run();
    /// assert_eq!(report.failure().unwrap().invariant, "step-bound");
    /// ```
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.settings.max_steps = max_steps;
        self
    }

    /// Where a failure's replay file goes (default `target/braid/`; `BRAID_OUT` overrides).
    pub fn out(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.out = Some(dir.into());
        self
    }

    /// Where committed replay files of this test are replayed from before exploring
    /// (default: `braid-regressions/<test file stem>/` beside the test file).
    pub fn regressions(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.regressions = Some(dir.into());
        self
    }

    /// Follows this replay file's schedule instead of exploring, as `BRAID_REPLAY` does (the
    /// file must name this check; the environment's file wins).
    pub fn replay(mut self, file: impl Into<PathBuf>) -> Self {
        self.settings.replay = Some(file.into());
        self
    }

    /// Which operations are scheduling points. The default, [`Grain::Access`], makes every
    /// operation on a braid primitive one; [`Grain::Await`] skips atomic accesses.
    pub fn grain(mut self, grain: Grain) -> Self {
        self.model = self.model.with_grain(grain);
        self
    }

    /// How many times per run virtual time may jump to the next deadline while a task can still
    /// run: a slow task losing to its timeout, as on a real clock. Each jump is a decision of
    /// the strategy, counted as a preemption (bounded searches bound it, the shrinker drops it
    /// when the failure does not need it). Default 1; `clock_jumps(0)` is tokio's paused
    /// clock, where timers fire only when no task can run.
    ///
    /// ```
    /// use std::time::Duration;
    /// use braid::tokio::{self, sync::oneshot, time};
    ///
    /// let slow_reply = || async {
    ///     let (tx, rx) = oneshot::channel::<u32>();
    ///     tokio::spawn(async move {
    ///         time::sleep(Duration::from_millis(5)).await;
    ///         let _ = tx.send(1);
    ///     });
    ///     // Woken at 5 ms, the replier may still be slower than a 10 ms deadline.
    ///     assert!(time::timeout(Duration::from_millis(10), rx).await.is_ok());
    /// };
    /// assert!(braid::check(slow_reply).run().failure().is_some());
    /// // On a paused clock it always replies in time.
    /// braid::check(slow_reply).clock_jumps(0).assert_holds();
    /// ```
    pub fn clock_jumps(mut self, n: usize) -> Self {
        self.model = self.model.with_clock_jumps(n);
        self
    }

    /// Lets the strategy crash a node (`braid::node`) up to `n` times per run, at any scheduling
    /// point: its tasks are killed and its init runs again, with only `Durable` state kept.
    pub fn crashes(mut self, n: usize) -> Self {
        self.model = self.model.with_crashes(n);
        self
    }

    /// Lets the strategy inject up to `n` network faults per run (`braid::tokio::net`): a
    /// connection reset, a partition between two hosts (healed when the strategy decides),
    /// each at any scheduling point, each a decision the replay file names and the shrinker
    /// drops when the failure does not need it.
    pub fn network_faults(mut self, n: usize) -> Self {
        self.model = self.model.with_network_faults(n);
        self
    }

    /// Declares that the test's tasks share state braid does not see: a `RefCell`, a
    /// `std::sync::Mutex` or atomic, a static, anything not from `braid::sync`, `braid::tokio`
    /// or `braid::std`, through which one task can see another's effect. Its searches then run
    /// without reduction (every schedule, as plain DFS). By default a test's DFS (and the
    /// default plan's) prunes schedules that differ only in the order of steps on different
    /// braid objects, which is sound only when the tasks share nothing else; a `#[tokio::test]`
    /// through the drop-in always runs as if this were said (`#[braid::test(plain_state)]`
    /// says it for a braid test).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    ///
    /// // Each task records its turn in a std Mutex braid cannot see.
    /// let order = || async {
    ///     let log = Arc::new(Mutex::new(Vec::new()));
    ///     let l = log.clone();
    ///     let a = braid::spawn(async move { l.lock().unwrap().push('a') });
    ///     braid::task::yield_now().await;
    ///     log.lock().unwrap().push('m');
    ///     a.await.unwrap();
    ///     assert_eq!(*log.lock().unwrap(), ['m', 'a'], "a went first");
    /// };
    /// let report = braid::check(order).plain_state().run();
    /// assert!(report.failure().is_some());
    /// ```
    pub fn plain_state(mut self) -> Self {
        self.model = self.model.with_plain_state();
        self
    }

    /// Skips the reduction audit (a reduced search that found nothing re-explores a seeded
    /// sample of the schedules it pruned without reduction, up to 1,024 runs, to tell whether
    /// the test shares state braid does not see): for a test that measures the reduction alone.
    pub fn without_reduction_audit(mut self) -> Self {
        self.settings.audit = false;
        self
    }

    /// Names the check, as `#[braid::test]` does with the test's path: replay files record it,
    /// and `BRAID_REPLAY` applies only to the check it names.
    pub fn name(mut self, name: &str) -> Self {
        let mut info = self.test.take().unwrap_or_else(|| TestInfo::unnamed(name));
        info.path = name.to_string();
        self.test = Some(info);
        self
    }

    #[doc(hidden)]
    pub fn test_info(mut self, info: TestInfo) -> Self {
        self.test = Some(info);
        self
    }

    /// Runs the check: the replay in `BRAID_REPLAY` if it names this check, else the committed
    /// regression files, then the exploration. Never panics on a failing schedule: the report
    /// says what happened.
    pub fn run(self) -> Report {
        self.run_reported(false)
    }

    /// Runs the check; a verdict (`assert_holds`, what a braid test ends with) also writes its
    /// outcome into `BRAID_REPORT` for `braid test`'s table. A report a test inspects itself
    /// (`run`) is not the test's verdict, and is not written.
    fn run_reported(self, verdict: bool) -> Report {
        let settings = self.settings.clone().with_env();
        let info = self
            .test
            .clone()
            .unwrap_or_else(|| TestInfo::unnamed("check"));
        let report = self.run_with(&settings, &info);
        if let (Some(dir), true) = (&settings.report_dir, verdict) {
            crate::outcome_file::write(dir, &info, &report);
        }
        report
    }

    fn run_with(&self, settings: &Settings, info: &TestInfo) -> Report {
        let seen;
        let model = match settings.state_seen {
            true => {
                seen = self.model.clone().with_seen_state();
                &seen
            }
            false => &self.model,
        };
        if let Some(file) = &settings.replay {
            match regressions::replay_requested(model, info, file) {
                regressions::Requested::Other(note) => eprintln!("braid: {note}"),
                regressions::Requested::Done(outcome) => {
                    return Report {
                        outcome,
                        regressions: Vec::new(),
                    }
                }
            }
        }
        let regressions = regressions::replay_committed(model, info, settings);
        if let Some(failure) = regressions.iter().find_map(Regression::failure) {
            let failure = failure.clone();
            return Report {
                outcome: Outcome::Failed(Box::new(failure)),
                regressions,
            };
        }
        let outcome = explore(model, info, settings);
        Report {
            outcome,
            regressions,
        }
    }

    /// Runs the check and panics unless it holds, with a message that names the test, the
    /// violation, the seed, run, preemptions and replay file, and the command that reruns it.
    pub fn assert_holds(self) {
        let name = self
            .test
            .as_ref()
            .map_or_else(|| "check".to_string(), |t| t.path.clone());
        let report = self.run_reported(true);
        for r in &report.regressions {
            if let Status::Drifted(why) = &r.status {
                eprintln!("braid: regression file {} drifted: {why}", r.file.display());
            }
        }
        match report.outcome {
            // One line per passing check, under `--nocapture` and in `braid test`'s table.
            Outcome::Holds { runs, coverage, .. } => {
                let s = if runs == 1 { "" } else { "s" };
                eprintln!("braid: {name} holds ({runs} run{s}: {coverage})");
            }
            Outcome::Failed(failure) => {
                eprintln!("{}", failure.trace);
                panic!("{failure}");
            }
            Outcome::Inconclusive(why) => panic!("braid: nothing proved: {why}"),
            Outcome::Drifted(why) => panic!("braid: {why}"),
        }
    }
}

/// Explores the schedules; on a violation, shrinks it and writes its replay file.
fn explore(model: &TestModel, info: &TestInfo, settings: &Settings) -> Outcome {
    let mut explorer = Explorer::new(model)
        .strategy(settings.strategy)
        .seed(settings.seed)
        .max_steps(settings.max_steps)
        .stop_on_first(true);
    if let Some(runs) = settings.runs {
        explorer = explorer.runs(runs);
    }
    if let Some(time) = settings.time {
        explorer = explorer.time(time);
    }
    if let Some(shard) = settings.shard {
        explorer = shard.restrict(explorer, settings);
    }
    // Not on a shard: its sleep sets may lean on subtrees another shard explores, so what its
    // sample reaches may be found there.
    if settings.audit && settings.shard.is_none() && sim::Model::reduction_safe(model) {
        explorer = explorer
            .audit(audit::BRANCHES)
            .audit_within(audit::RUNS_PER_BRANCH, audit::AT_LEAST);
    }
    let summary = match explorer.run() {
        Ok(summary) => summary,
        Err(e) => return Outcome::Inconclusive(format!("the exploration failed: {e}")),
    };
    match audit::finding(&summary) {
        Finding::Clean => {}
        Finding::Violation(found) => {
            let mut failure = failure::record(model, info, settings, &found);
            failure.message = found.message.clone();
            return Outcome::Failed(Box::new(failure));
        }
        Finding::Missed(what) => {
            eprintln!("{}", audit::warning(&info.path, &what));
            let plain = model.clone().with_plain_state();
            return match explore(&plain, info, settings) {
                Outcome::Holds {
                    runs,
                    exhaustive,
                    coverage,
                } => Outcome::Holds {
                    runs,
                    exhaustive,
                    coverage: coverage + audit::COVERAGE_NOTE,
                },
                other => other,
            };
        }
    }
    let found = summary.violations.first();
    let failure = found.map(|found| failure::record(model, info, settings, found));
    if let Some(shard) = settings.shard {
        let written = ShardSummary {
            shard,
            test: &info.path,
            model,
            settings,
            summary: &summary,
            failure: found.zip(failure.as_ref()),
        }
        .write(&info.out_dir(settings));
        match written {
            Ok(file) => eprintln!(
                "braid: shard {}/{} summary: {}",
                shard.index,
                shard.count,
                file.display()
            ),
            Err(why) => return Outcome::Inconclusive(format!("the shard's summary: {why}")),
        }
    }
    if let Some(failure) = failure {
        return Outcome::Failed(Box::new(failure));
    }
    // A coarse grain's "holds" stands only if access-grain runs find nothing either.
    if sim::Model::grain(model) == Grain::Await {
        let fine = model.clone().with_grain(Grain::Access);
        let runs = sim::explore::GRAIN_CHECK_RUNS;
        match sim::explore::grain_check(model, settings.seed, runs, settings.max_steps) {
            Ok(Some(found)) => {
                let mut failure = failure::record(&fine, info, settings, &found);
                failure.message = found.message.clone();
                return Outcome::Failed(Box::new(failure));
            }
            Ok(None) => {}
            Err(e) => return Outcome::Inconclusive(format!("the grain check failed: {e}")),
        }
    }
    // Judged as every entry point judges a summary (`Summary::verdict`).
    if let SearchVerdict::Inconclusive(why) = summary.verdict(settings.strategy) {
        return Outcome::Inconclusive(why);
    }
    let probe = probe_run(model, settings);
    if let Some(why) = budget_without_target(model, &probe) {
        return Outcome::Inconclusive(why);
    }
    let mut coverage = summary.coverage();
    if let Some(shard) = settings.shard {
        coverage = format!("shard {} of {}: {coverage}", shard.index, shard.count);
    }
    if let Some(budgets) = fault_budgets(model) {
        coverage += &format!(" (a run may have up to {budgets}, each counted as a preemption)");
    }
    if saw_nothing_of_yours(&probe) {
        coverage += "; braid saw no operation of yours: code on real tokio or std::sync is not \
                     explored (see the README, \"Check your tokio crate\")";
    }
    Outcome::Holds {
        runs: summary.runs,
        exhaustive: summary.exhaustive,
        coverage,
    }
}

/// The faults a run may have, in words ("1 crash and 2 network faults"), if any.
fn fault_budgets(model: &TestModel) -> Option<String> {
    let count = |n: usize, one: &str, many: &str| match n {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {many}")),
    };
    let parts: Vec<String> = [
        count(sim::Model::crashes(model), "crash", "crashes"),
        count(
            sim::Model::network_faults(model),
            "network fault",
            "network faults",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(" and "))
}

/// Whether a run of the test (one, traced, on a random schedule) reaches no scheduling point
/// but the test's own tasks starting and being joined: then its code ran on something braid
/// does not see (real tokio, std's locks and atomics), and "holds" says nothing about it.
fn saw_nothing_of_yours(run: &sim::RunResult) -> bool {
    let Some(trace) = &run.trace else {
        return false;
    };
    trace.lines.iter().all(|line| match line {
        sim::trace::TraceLine::Step { op, object, .. } => {
            let joined = object.as_deref().is_some_and(|o| o.starts_with("join#"));
            let harness = ["start", "wake-up", "clock jump"].contains(&op.as_str());
            harness || op.starts_with("join ") || joined
        }
        _ => true,
    })
}

/// One run of the test, traced, on a random schedule: what a holding check looks at to say
/// what it could not see.
fn probe_run(model: &TestModel, settings: &Settings) -> sim::RunResult {
    let config = sim::RunConfig {
        max_steps: settings.max_steps,
        trace: true,
        record_accesses: false,
    };
    let strategy = StrategyKind::Random.build(settings.seed, settings.max_steps);
    sim::run_once(model, strategy, 0, &config).0
}

/// A fault budget with nothing to strike (crashes without a node, network faults without a
/// connection or socket) proves nothing about faults: why, if so.
fn budget_without_target(model: &TestModel, probe: &sim::RunResult) -> Option<String> {
    let crashes = sim::Model::crashes(model);
    let faults = sim::Model::network_faults(model);
    if crashes > 0 && probe.nodes == 0 {
        return Some(format!(
            "crashes({crashes}) was asked, but the test starts no node (braid::node::start): \
             nothing could crash, so a pass would say nothing about crashes"
        ));
    }
    if faults > 0 && probe.fault_sites == 0 {
        return Some(format!(
            "network_faults({faults}) was asked, but the test made no connection or UDP socket \
             (braid::tokio::net) in the run braid looked at: no fault could strike, so a pass \
             would say nothing about faults"
        ));
    }
    None
}
