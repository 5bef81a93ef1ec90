//! Engine tests on toy models: determinism, replay, blocking and deadlock detection, panics,
//! the step bound, and PCT finding an ordering bug that a non-preemptive run misses.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use sim::invariant::Invariant;
use sim::strategy::{Guided, Pct, Random, Replay, Scheduler, Switches};
use sim::sync::{channel, Mutex, Notify};
use sim::{run_once, yield_point, History, Model, Monitor, RunConfig, RunOutcome};

#[derive(Hash)]
struct Note(String);

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Fails at quiescence unless the counter reached `expected`.
struct CounterIs {
    counter: Rc<Cell<u32>>,
    expected: u32,
}

impl Invariant<Note> for CounterIs {
    fn name(&self) -> &str {
        "no-lost-update"
    }
    fn observe(&mut self, _: &Note) -> Result<(), String> {
        Ok(())
    }
    fn at_quiescence(&mut self) -> Result<(), String> {
        let got = self.counter.get();
        if got == self.expected {
            Ok(())
        } else {
            Err(format!("counter is {got}, expected {}", self.expected))
        }
    }
}

/// Two tasks each read a shared counter, await, and write back: a lost update.
struct LostUpdate;

impl Model for LostUpdate {
    fn start(&self) -> Rc<dyn Monitor> {
        let counter = Rc::new(Cell::new(0));
        let history = History::new(vec![Box::new(CounterIs {
            counter: counter.clone(),
            expected: 2,
        })]);
        for name in ["a", "b"] {
            let counter = counter.clone();
            let history = history.clone();
            sim::spawn(name, async move {
                let v = counter.get();
                yield_point("db.write").await;
                counter.set(v + 1);
                history.emit(Note(format!("{name} wrote {}", v + 1)));
            });
        }
        history.monitor()
    }
}

fn config(trace: bool) -> RunConfig {
    RunConfig {
        max_steps: 1000,
        trace,
        record_accesses: false,
    }
}

fn run_random(model: &dyn Model, seed: u64, run: u64) -> sim::RunResult {
    run_once(model, Box::new(Random::new(seed)), run, &config(true)).0
}

#[test]
fn same_seed_same_trace() {
    for run in 0..20 {
        let a = run_random(&LostUpdate, 7, run);
        let b = run_random(&LostUpdate, 7, run);
        assert_eq!(a.digest, b.digest);
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.decisions(), b.decisions());
    }
}

/// One thread reuses its madsim runtime from run to run: a run's outcome must not depend on the
/// runs before it. Runs of models that deadlock, panic, idle and lose updates, one after another
/// on this thread, against each run alone on a fresh thread (a fresh runtime).
#[test]
fn a_run_is_the_same_after_other_runs_as_alone() {
    fn digests(runs: std::ops::Range<u64>) -> Vec<(u64, Option<String>)> {
        let models: [&dyn Model; 4] = [
            &LostUpdate,
            &LockOrder,
            &Idle { reply: false },
            &Idle { reply: true },
        ];
        let mut out = Vec::new();
        for run in runs {
            for model in models {
                let r = run_random(model, 5, run);
                out.push((r.digest, r.violation().map(|v| v.message.clone())));
            }
        }
        out
    }
    let in_sequence = digests(0..600);
    for run in [0, 1, 255, 256, 257, 599] {
        let alone = std::thread::spawn(move || digests(run..run + 1))
            .join()
            .unwrap();
        let at = run as usize * 4;
        assert_eq!(alone[..], in_sequence[at..at + 4], "run {run}");
    }
}

#[test]
fn random_finds_the_lost_update_and_replay_reproduces_it() {
    let failing = (0..50)
        .map(|run| run_random(&LostUpdate, 1, run))
        .find(|r| r.violation().is_some())
        .expect("random exploration finds the lost update within 50 runs");
    assert_eq!(failing.violation().unwrap().invariant, "no-lost-update");
    let replayed = run_once(
        &LostUpdate,
        Box::new(Replay::strict(failing.decisions())),
        0,
        &config(true),
    )
    .0;
    assert_eq!(replayed.outcome, failing.outcome);
    assert_eq!(replayed.digest, failing.digest);
    assert_eq!(replayed.trace, failing.trace);
}

#[test]
fn replay_of_a_foreign_schedule_diverges_naming_the_step() {
    let decisions = vec![
        sim::Decision::Task("a".into()),
        sim::Decision::Task("nobody".into()),
    ];
    let r = run_once(
        &LostUpdate,
        Box::new(Replay::strict(decisions)),
        0,
        &config(false),
    )
    .0;
    match r.outcome {
        RunOutcome::Diverged(d) => {
            assert_eq!(d.step, 1);
            assert!(d.expected.contains("nobody"), "{d}");
        }
        other => panic!("expected a divergence, got {other:?}"),
    }
}

/// Lock-order inversion: a takes x then y, b takes y then x.
struct LockOrder;

impl Model for LockOrder {
    fn start(&self) -> Rc<dyn Monitor> {
        let x = Rc::new(Mutex::new("x", ()));
        let y = Rc::new(Mutex::new("y", ()));
        for (name, first, second) in [("a", x.clone(), y.clone()), ("b", y, x)] {
            sim::spawn(name, async move {
                let _g1 = first.lock().await;
                let _g2 = second.lock().await;
            });
        }
        History::<Note>::new(vec![]).monitor()
    }
}

#[test]
fn deadlock_names_each_blocked_task_and_what_it_waits_on() {
    let deadlock = (0..200)
        .map(|run| run_random(&LockOrder, 3, run))
        .find_map(|r| r.violation().cloned())
        .expect("the lock-order inversion deadlocks in some run");
    assert_eq!(deadlock.invariant, "deadlock");
    assert!(
        deadlock.message.contains("a waits on lock y"),
        "{}",
        deadlock.message
    );
    assert!(
        deadlock.message.contains("b waits on lock x"),
        "{}",
        deadlock.message
    );
}

/// A server idle on its inbox is quiescent; a client waiting for a reply nobody sends is stuck.
struct Idle {
    reply: bool,
}

impl Model for Idle {
    fn start(&self) -> Rc<dyn Monitor> {
        let (tx, rx) = channel::<u32>("inbox", 1);
        let (reply_tx, reply_rx) = channel::<u32>("reply", 1);
        let reply = self.reply;
        sim::spawn("server", async move {
            loop {
                let v = rx.recv_idle().await;
                if reply {
                    reply_tx.send(v).await;
                }
            }
        });
        sim::spawn("client", async move {
            tx.send(1).await;
            reply_rx.recv().await;
        });
        History::<Note>::new(vec![]).monitor()
    }
}

#[test]
fn idle_servers_are_quiescent_and_a_missing_reply_is_a_deadlock() {
    for run in 0..20 {
        let ok = run_random(&Idle { reply: true }, 1, run);
        assert_eq!(ok.outcome, RunOutcome::Holds);
        let stuck = run_random(&Idle { reply: false }, 1, run);
        let v = stuck.violation().expect("client waits forever");
        assert_eq!(v.invariant, "deadlock");
        assert!(
            v.message.contains("client waits on recv reply"),
            "{}",
            v.message
        );
        assert!(v.message.contains("idle: server"), "{}", v.message);
    }
}

struct Panics;

impl Model for Panics {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("doomed", async {
            yield_point("before").await;
            panic!("model bug");
        });
        History::<Note>::new(vec![]).monitor()
    }
}

#[test]
fn a_panicking_task_is_a_violation_not_a_crash() {
    let r = run_random(&Panics, 1, 0);
    let v = r.violation().expect("panic reported");
    assert_eq!(v.invariant, "panic");
    assert!(
        v.message.contains("doomed panicked: model bug"),
        "{}",
        v.message
    );
}

struct Spins;

impl Model for Spins {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("spinner", async {
            loop {
                yield_point("poll").await;
            }
        });
        History::<Note>::new(vec![]).monitor()
    }
}

#[test]
fn a_run_past_the_step_bound_is_reported_not_hung() {
    // It never yields: it may be long, not livelocked, so it goes on to the long-run cap.
    let r = run_once(&Spins, Box::new(Random::new(1)), 0, &config(false)).0;
    assert_eq!(r.violation().unwrap().invariant, "step-bound");
    assert_eq!(r.steps, 1000 * sim::LONG_RUN_FACTOR);
}

/// One task doing many operations without yielding, longer than `max_steps`, then done.
struct LongStraightLine(usize);

impl Model for LongStraightLine {
    fn start(&self) -> Rc<dyn Monitor> {
        let n = self.0;
        sim::spawn("worker", async move {
            for _ in 0..n {
                yield_point("send").await;
            }
        });
        History::<Note>::new(vec![]).monitor()
    }
}

#[test]
fn a_long_straight_line_task_is_no_livelock() {
    let r = run_once(
        &LongStraightLine(5_000),
        Box::new(Random::new(1)),
        0,
        &config(false),
    )
    .0;
    assert!(r.violation().is_none(), "{:?}", r.violation());
    assert!(r.steps > 5_000);
}

/// Spins in fair yields forever, after a long straight stretch: cut as a livelock once it has
/// gone round in yields for half the bound, not at the bound itself.
struct LongThenSpin;

impl Model for LongThenSpin {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("worker", async {
            for _ in 0..3_000 {
                yield_point("send").await;
            }
            sim::spawn("other", async {
                loop {
                    sim::yield_now().await;
                }
            });
            loop {
                sim::yield_now().await;
            }
        });
        History::<Note>::new(vec![]).monitor()
    }
}

#[test]
fn a_yield_cycle_after_a_long_stretch_is_a_livelock() {
    let r = run_once(&LongThenSpin, Box::new(Random::new(1)), 0, &config(false)).0;
    let v = r.violation().expect("a livelock");
    assert_eq!(v.invariant, "livelock", "{}", v.message);
    assert!(r.steps > 3_000 && r.steps < 5_000, "{}", r.steps);
}

/// A depth-2 ordering bug: `init` must publish before `user` reads, but a non-preemptive
/// schedule (run `init` to completion first, as spawned) never shows the bad order; a single
/// preemption of `init` between its two awaits does.
struct OrderBug;

impl Model for OrderBug {
    fn start(&self) -> Rc<dyn Monitor> {
        let ready = Rc::new(Cell::new(false));
        let seen = Rc::new(RefCell::new(None));
        let history = History::new(vec![Box::new(ReadAfterInit(seen.clone()))]);
        let notify = Rc::new(Notify::new("started"));
        {
            let ready = ready.clone();
            let notify = notify.clone();
            sim::spawn("init", async move {
                notify.notify_one().await;
                yield_point("load config").await;
                ready.set(true);
            });
        }
        sim::spawn("user", async move {
            notify.notified().await;
            *seen.borrow_mut() = Some(ready.get());
        });
        history.monitor()
    }
}

struct ReadAfterInit(Rc<RefCell<Option<bool>>>);

impl Invariant<Note> for ReadAfterInit {
    fn name(&self) -> &str {
        "read-after-init"
    }
    fn observe(&mut self, _: &Note) -> Result<(), String> {
        Ok(())
    }
    fn at_quiescence(&mut self) -> Result<(), String> {
        match *self.0.borrow() {
            Some(false) => Err("user read before init finished".into()),
            _ => Ok(()),
        }
    }
}

#[test]
fn pct_finds_a_depth_two_bug_that_a_non_preemptive_run_misses() {
    // A guided run with no context switches never preempts.
    let calm = run_once(
        &OrderBug,
        Box::new(Guided::new(Switches::default())),
        0,
        &config(false),
    )
    .0;
    assert_eq!(calm.outcome, RunOutcome::Holds);
    assert_eq!(calm.preemptions, 0);
    let mut strategy: Box<dyn Scheduler> = Box::new(Pct::new(5, 2, 6));
    let mut found = None;
    for run in 0..100 {
        let (r, s) = run_once(&OrderBug, strategy, run, &config(false));
        strategy = s;
        if r.violation().is_some() {
            found = Some(r);
            break;
        }
    }
    let r = found.expect("PCT depth 2 finds the ordering bug within 100 runs");
    assert_eq!(r.violation().unwrap().invariant, "read-after-init");
    assert!(r.preemptions >= 1);
}

/// Task names are unique (they identify tasks in replay files): a namesake gets the next free
/// `#n`, skipping one a model chose itself.
struct Namesakes;

impl Model for Namesakes {
    fn start(&self) -> Rc<dyn Monitor> {
        for name in ["w#3", "w", "w", "w"] {
            sim::spawn(name, async {});
        }
        History::<String>::new(Vec::new()).monitor()
    }
}

#[test]
fn namesakes_get_the_next_free_suffix() {
    let (r, _) = run_once(
        &Namesakes,
        Box::new(Random::new(1)),
        0,
        &RunConfig::default(),
    );
    let mut names: Vec<String> = r.decisions().iter().map(|d| d.to_string()).collect();
    names.sort();
    assert_eq!(names, ["w", "w#2", "w#3", "w#4"]);
}

/// Past a few dozen tasks the names are kept as a set: the same names come out.
struct ManyNamesakes;

impl Model for ManyNamesakes {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("w#40", async {});
        for _ in 0..40 {
            sim::spawn("w", async {});
        }
        History::<String>::new(Vec::new()).monitor()
    }
}

#[test]
fn many_namesakes_stay_unique() {
    let (r, _) = run_once(
        &ManyNamesakes,
        Box::new(Random::new(1)),
        0,
        &RunConfig::default(),
    );
    let names: std::collections::BTreeSet<String> =
        r.decisions().iter().map(|d| d.to_string()).collect();
    assert_eq!(names.len(), 41);
    assert!(names.contains("w#41") && names.contains("w#39") && !names.contains("w#1"));
}
