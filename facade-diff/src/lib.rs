//! The facade checks itself against the real thing (DESIGN.md, "Fidelity is a proof
//! obligation"; issue 27, item 2): the facade's counterpart of the engine's differential test
//! (`sim/tests/generated.rs`).
//!
//! Small programs over the facade are generated as data ([`program`]): two or three tasks,
//! each a short list of operations on a fixed set of shared objects (a `Mutex`, an `RwLock`, a
//! `Notify`, a `Semaphore`, a oneshot, a bounded mpsc, a watch, two atomics, the tasks' join
//! handles). One interpreter, written once as a macro ([`interpreter!`]), runs them: it is
//! instantiated over braid's facade here ([`on_braid`]) and over real tokio in the tests, so
//! both runtimes run the identical code. A run's [`Outcome`](outcome::Outcome) is what each
//! task observed, in order, how it ended (done, stuck in which operation, aborted), and the
//! atomics' final values; it is recorded at the end of a run, when every task has ended.
//!
//! Three outcome sets per program:
//! - braid at the normal grain, by exhaustive search (plain DFS, no preemption bound: a program
//!   whose search does not finish within its budget is left out, and counted);
//! - braid at the "paranoid" grain: the same program with an explicit, non-fair scheduling point
//!   before every facade call, every drop of a guard, permit or channel end, and before each
//!   task's end (an access to an atomic of the task's own: a synchronous point, not an
//!   `.await`, so that it adds no place where an aborted task can be dropped);
//! - real tokio's multi-thread runtime, many runs, with perturbation in the harness only
//!   (random `yield_now`s and spins before each of those same places, from a seeded RNG; spins
//!   only in a task some task aborts, since tokio drops an aborted task where it returns
//!   `Pending`, and a harness yield would be such a place the program does not have).
//!
//! Every outcome tokio reaches must be one braid reaches (sampled, so never the converse), and
//! the two grains must reach the same set: an outcome braid misses is an interleaving a facade
//! operation hides, because it reads or writes shared state without a scheduling point of its
//! own.
//!
//! Waits. A program may wait for something that never comes (a lost wakeup is exactly what the
//! check is for). Every wait runs under a harness timeout that gives up only when no other task
//! can move: in braid, virtual time moves only then, so a tick's timer fires only then; under
//! tokio, a tick is a few milliseconds and the wait gives up after two ticks in which every
//! other task waited or had ended and nothing moved. A wait that gives up either leaves its
//! task stuck for good (it keeps what it holds; its `is_finished` stays false and a join of it
//! is stuck too) or, in a `timeout` operation, is observed as `timeout` and the task goes on.
//! Both runtimes mean the same by it; a sleep (`sleep(long)`) likewise lasts until no other
//! task can move. What is not compared: how long anything took, task ids, wall-clock timing.
//!
//! `yield_now` is drawn too: braid's is fair (a task that yields runs again only after every
//! task that could run then has taken a step), a deliberate narrowing: a tokio outcome braid
//! misses in a program that yields is reported but not counted as a failure (the bench found
//! such: a task that yields before aborting another lets that one start first, so it is never
//! aborted before its first poll, as it can be under tokio). A missing scheduling point in a
//! program that yields still shows, as a difference between the grains (both yield fairly).

//!
//! On the facade of this branch (before the missing points are added), the bench size finds
//! outcomes tokio reaches and braid does not, each also a difference between the grains, from:
//! the last mpsc `Sender`'s drop (program 2 of the small corpus: `try_recv` between the send
//! and the drop sees `empty` under tokio, never under braid), a task's completion sharing a
//! step with its last operation (a join of it aborted, or `is_finished` false, after its last
//! operation's effect was seen), oneshot operations and the oneshot `Receiver`'s drop, the
//! watch `Receiver`'s drop, and `Notify::notified()` reading the `notify_waiters` count without
//! a point (a waiter created after a `notify_waiters` it never sees).

pub mod interp;
pub mod outcome;
pub mod program;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use braid::engine::strategy::Reduction;
use braid::{Outcome as Verdict, Strategy};

use outcome::Outcome;
use program::Program;

/// The interpreter over braid's facade.
pub mod on_braid {
    use std::time::Duration;

    use braid::std::sync::atomic as at;
    use braid::tokio as rt;

    /// One run: at the normal grain, or the paranoid one.
    pub struct Cfg {
        pub paranoid: bool,
    }

    /// One task's hooks: at the paranoid grain, an object of its own to access.
    pub struct Hooks {
        paranoid: Option<at::AtomicUsize>,
    }

    fn hooks(cfg: &Cfg, _prog: &Program, _task: usize) -> Hooks {
        Hooks {
            paranoid: cfg.paranoid.then(|| at::AtomicUsize::named("paranoid", 0)),
        }
    }

    /// The paranoid grain's scheduling point: an access to the task's own atomic, a
    /// synchronous point (the task's stack is parked there, any task may run next) that, unlike
    /// `braid::task::io_point`, is no `.await`: an `.await` that returns `Pending` is a place
    /// where an aborted task is dropped, which the program itself does not have (tokio drops an
    /// aborted task only where it returns `Pending`), so an `io_point` would add outcomes of its
    /// own to every program that aborts a task.
    async fn point(h: &mut Hooks) {
        if let Some(a) = &h.paranoid {
            a.load(std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Virtual: a tick's timer fires only when no task can move. Timers due at the same
    /// instant fire in an order the strategy picks: a sleep that ends there moves (and bumps
    /// the progress count), so a wait whose tick fires after it does not give up at that tick,
    /// as under tokio a wait does not give up while another task moves on from a sleep.
    const TICK: Duration = Duration::from_millis(3);
    const QUIET_TICKS: u32 = 1;
    const CHECK_PROGRESS: bool = true;

    /// The harness's wait for the end: a sleep wakes only when no task can move, so it adds no
    /// interleaving (its tick differs from the waits' so that their timers rarely coincide).
    async fn settle_wait(run: &Run) {
        while !run.all_settled() {
            rt::time::sleep(Duration::from_micros(700)).await;
        }
    }

    crate::interpreter!();
}

/// What braid's exhaustive search of a program reached.
#[derive(Debug)]
pub struct Search {
    pub outcomes: BTreeSet<Outcome>,
    /// The search finished: every schedule was explored.
    pub finished: bool,
    pub runs: u64,
    /// Why it did not finish, or what failed.
    pub note: String,
}

/// Explores every schedule of `prog` under braid (plain DFS, without a preemption bound or
/// within `bound`), at most `budget` runs, at the normal grain or the paranoid one.
pub fn explore(prog: &Arc<Program>, paranoid: bool, bound: Option<usize>, budget: u64) -> Search {
    let collected: Arc<Mutex<BTreeSet<Outcome>>> = Arc::default();
    let (p, c) = (prog.clone(), collected.clone());
    let runs = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let r = runs.clone();
    let report = braid::check(move || {
        let (p, c, r) = (p.clone(), c.clone(), r.clone());
        async move {
            let o = on_braid::run_program(p, on_braid::Cfg { paranoid }).await;
            // Recorded only here, at the end of a run in which every task has ended.
            c.lock().unwrap().insert(o);
            r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    })
    .name(&format!(
        "facade-diff program {}{}",
        prog.seed,
        if paranoid { " (paranoid)" } else { "" }
    ))
    .strategy(Strategy::Dfs {
        preemption_bound: bound,
        reduction: Reduction::None,
    })
    .runs(budget)
    .run();
    let outcomes = std::mem::take(&mut *collected.lock().unwrap());
    let completed = runs.load(std::sync::atomic::Ordering::SeqCst);
    let (finished, note) = match report.outcome {
        // Unbounded, the search must have explored every schedule (a DFS that ran out of budget
        // may still hold "within k preemptions", the last level its iterative deepening
        // finished); bounded, every schedule within the bound.
        Verdict::Holds {
            exhaustive,
            coverage,
            ..
        } => {
            let within =
                bound.is_some_and(|b| coverage.contains(&format!("within {b} preemption")));
            (exhaustive || within, coverage)
        }
        Verdict::Inconclusive(why) => (false, why),
        Verdict::Failed(f) => (false, format!("a run failed: {}", f.message)),
        Verdict::Drifted(why) => (false, why),
    };
    Search {
        outcomes,
        finished,
        runs: completed,
        note,
    }
}
