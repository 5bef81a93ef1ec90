//! The facade checks itself against the real thing (DESIGN.md, "Fidelity is a proof
//! obligation"; issue 27, item 2): the facade's counterpart of the engine's differential test
//! (`sim/tests/generated.rs`).
//!
//! Small programs over the facade are generated as data ([`program`]): two or three tasks,
//! each a short list of operations on a fixed set of shared objects (a `Mutex`, an `RwLock`, a
//! `Notify`, a `Semaphore`, a oneshot, a bounded mpsc, a watch, two atomics, the tasks' join
//! handles; and, when asked, a TCP connection and a file: see below). One interpreter, written
//! once as a macro ([`interpreter!`]), runs them: it is instantiated over braid's facade here
//! ([`on_braid`]) and over real tokio in the tests, so both runtimes run the identical code. A
//! run's [`Outcome`](outcome::Outcome) is what each task observed, in order, how it ended
//! (done, stuck in which operation, aborted), and the atomics' final values; it is recorded at
//! the end of a run, when every task has ended.
//!
//! Three outcome sets per program:
//! - braid at the normal grain, by exhaustive search (plain DFS, no preemption bound: a program
//!   whose search does not finish within its budget is left out, and counted, unless the
//!   corpus compares unfinished searches too: see the connection and the file);
//! - braid at the "paranoid" grain: the same program with an explicit, non-fair scheduling point
//!   before every facade call, every drop of a guard, permit, channel end or connection end,
//!   and before each task's end (an access to an atomic of the task's own: a synchronous point,
//!   not an `.await`, so that it adds no place where an aborted task can be dropped);
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
//! The connection and the file (issue 29, item 5; [`GenOptions::net`](program::GenOptions),
//! `files`). Before the tasks start, the harness binds a listener on `127.0.0.1:0`, connects to
//! it and accepts, and hands each end to a task: whole, or, in a program of three tasks, one
//! end split (`into_split`) between two. A task's end is closed when it ends or is aborted, and
//! kept open by a task stuck for good (until the run's outcome is recorded). The operations,
//! on the task's own end: `write_all` of one byte (ok, or the error's kind), `read` of one
//! byte (a wait, timed as the others: the byte, `eof`, or the error's kind), `shutdown` (ok,
//! or the error's kind); on one file, absent at the start: an append (`OpenOptions` with
//! `append` and `create`, `write_all` of one byte, then the file dropped: no flush, no sync; ok
//! or the error's kind) and `fs::read` (its bytes, or the error's kind). Under tokio they are a
//! real TCP connection on loopback and a real file in a temporary directory of the run's own;
//! under braid, host `main`'s simulated network and disk (each write's, and each close's,
//! arrival a step of a delivery task). Compared: what each task observed, as for the rest.
//! Not compared: error messages, addresses and ports, when bytes arrive, what a crash would
//! leave of the file (no crashes, no syncs), network faults (none are injected), the file's
//! contents at the end (only what reads saw).
//!
//! A search over the connection rarely finishes (every arrival is a step free to fall between
//! any two of the tasks'), so the corpora with it compare unfinished searches too: braid's set
//! is then complete within the preemptions its budget covered, and each tokio outcome it lacks
//! is sought by a bigger search ([`reach`]: braid's default plan, bounded DFS and sampling by
//! turns) before it counts as missing, as within that search's coverage. The grains are
//! compared within a bound, down to none, where both searches finish.
//!
//! Findings about braid's net and fs facade, each with its smallest program in a `finding_*`
//! test of `tests/against_tokio.rs` (each failed before its fix):
//! 1. (Fixed; its test now runs.) A close with unread bytes. Linux answers the close of a socket that has not read all it
//!    received with a reset (an RST, no FIN): the other end's next write fails with
//!    `ConnectionReset`, its next read too, and the reads after that error see the end. Braid
//!    closes with the end of the stream and drops what arrives later (`Side::drop`: `shut`,
//!    `reader_gone`): the other end reads the end, its next write is accepted and resets the
//!    connection, and from then on its writes fail with `BrokenPipe` and its reads with
//!    `ConnectionReset`, for good. Also: once the end of the stream has arrived, Linux's reads
//!    return the end even after a reset (the FIN counts first), where braid's `poll_read` puts
//!    the reset first (a write to an end closed cleanly, then a read: `eof` under tokio,
//!    `ConnectionReset` under braid). Fixed in braid: a close with unread bytes resets the
//!    connection, a segment arriving at a closed reader answers with a reset, the first
//!    operation after a reset reports it once (`BrokenPipe` once the peer's end of stream has
//!    arrived, as Linux's CLOSE_WAIT gives EPIPE), and reads after it, or after the end, see
//!    the end. The corpus test with the connection and the file then finds no missing outcome
//!    on its 20 programs (2 before), and runs by default.
//! 2. (Fixed; its test now runs.) An fs call is where an abort lands. Tokio runs each fs call on its blocking pool and
//!    awaits it, so an aborted task stops inside an append (the file created and left empty,
//!    or one append of two made). Braid's fs calls are scheduling points that never return
//!    `Pending`, so an abort never lands inside one (only where the task waits, or before its
//!    first step).
//!    Fixed in braid: each fs call runs as tokio's, on a task of its own (`fs`) that the caller
//!    awaits through the facade's `JoinHandle`, so the call's effect is a step of that task and
//!    an abort while the caller waits drops the caller there, the effect made or still to come.
//! 3. (Fixed; its test now runs.) An unflushed write lands later. Tokio's `File::poll_write` hands the bytes to a blocking
//!    task and returns: unflushed, they land after the call, after a later read by the same
//!    task, and in any order with a later write through another handle (a task's appends of 1
//!    then 2, then its read: `[]`, `[1]`, `[2]`, `[2, 1]` or `[1, 2]`). Braid's write lands
//!    within the call, so a missing `flush` is never seen. Fixed in braid: a `File` keeps one
//!    operation in flight as tokio's (its write returns at once and lands as a step of its `fs`
//!    task; the file's next read, write, seek, sync, `set_len` or `flush` waits for it and
//!    reports its error), and a file dropped with a write in flight leaves it to land.
//! 4. (Fixed; its test now runs.) An fs call may be ready at its first poll. Tokio's blocking
//!    pool may finish a call before its caller first polls the handle (`OpenOptions::open` was
//!    ready at its first poll in 1,854 of 20,000 runs on this machine), and the caller then goes
//!    on in the same poll, where an abort does not stop it. Program 96001 of the bench: a task
//!    aborted in the middle of its poll, before its store, still stores, appends and ends, under
//!    tokio; braid's caller always waited once after starting its call, and was dropped there.
//!    Fixed in braid: the caller's first look at its call's result is a step of its own, after
//!    which the call may have finished (`src/tokio/fs/blocking.rs`).
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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

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

    /// Whether a task moved at this instant before this tick's wait looked: the progress count
    /// as the first tick to fire at this instant found it, kept for the run. Counting from the
    /// wait's start instead (`seen`) made the later of two waits give up first, always: a sleep
    /// begun before another task's last move never ended before a wait begun after that move,
    /// though under tokio either may (seed 80124 of `bench_size`: a send stuck where tokio's
    /// sleeper ended first and closed the channel). Virtual time moves only when no task can,
    /// so every task that moved since a wait began moved before this instant, not at it.
    fn moved(now: u64, _seen: u64) -> bool {
        #[derive(Default)]
        struct FirstTick(std::cell::Cell<Option<(braid::engine::time::Instant, u64)>>);
        let first = braid::engine::fault::run_local::<FirstTick>();
        // Reading the clock here is no scheduling point: the tick's own timer was the point.
        let instant = braid::engine::time::Instant::now();
        match first.0.get() {
            Some((at, progress)) if at == instant => now != progress,
            _ => {
                first.0.set(Some((instant, now)));
                false
            }
        }
    }

    /// The harness's wait for the end: a sleep wakes only when no task can move, so it adds no
    /// interleaving (its tick differs from the waits' so that their timers rarely coincide).
    async fn settle_wait(run: &Run) {
        while !run.all_settled() {
            rt::time::sleep(Duration::from_micros(700)).await;
        }
    }

    /// The shared file: a path on host `main`'s disk, which is empty at each run's start.
    fn scratch_file() -> (std::path::PathBuf, Box<dyn std::any::Any + Send>) {
        (std::path::PathBuf::from("/shared"), Box::new(()))
    }

    /// What stuck tasks kept, held by the run itself: dropped with it, after its end, where a
    /// connection's end is released without a scheduling point (nothing of the run is left to
    /// see it) and without leaking.
    #[derive(Default)]
    struct Kept(std::cell::RefCell<Vec<Box<dyn std::any::Any + Send>>>);

    fn release_kept(kept: Vec<Box<dyn std::any::Any + Send>>) {
        if kept.is_empty() {
            return;
        }
        braid::engine::fault::run_local::<Kept>()
            .0
            .borrow_mut()
            .extend(kept);
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

/// What a search for given outcomes found (see [`reach`]).
#[derive(Debug)]
pub struct Reach {
    /// The outcomes sought that braid reached.
    pub reached: BTreeSet<Outcome>,
    pub runs: u64,
    /// Every schedule was explored (so an outcome sought and not reached is out of braid's
    /// reach).
    pub exhaustive: bool,
    /// What the schedules explored cover ("every schedule within 2 preemptions"), or why it
    /// stopped.
    pub note: String,
}

/// Said by the run that reaches the last outcome sought: the search stops there.
const ALL_REACHED: &str = "facade-diff: every outcome sought is reached";

/// Searches braid's schedules of `prog` (normal grain, at most `budget` runs) for `sought`:
/// outcomes another runtime reached that a search which did not finish did not. Stops as soon
/// as it has reached them all.
pub fn reach(prog: &Arc<Program>, sought: &BTreeSet<Outcome>, budget: u64) -> Reach {
    let reached: Arc<Mutex<BTreeSet<Outcome>>> = Arc::default();
    let runs = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let (p, want, got, r) = (
        prog.clone(),
        Arc::new(sought.clone()),
        reached.clone(),
        runs.clone(),
    );
    let report = braid::check(move || {
        let (p, want, got, r) = (p.clone(), want.clone(), got.clone(), r.clone());
        async move {
            let o = on_braid::run_program(p, on_braid::Cfg { paranoid: false }).await;
            r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if want.contains(&o) {
                let all = {
                    let mut got = got.lock().unwrap_or_else(PoisonError::into_inner);
                    got.insert(o);
                    got.len() == want.len()
                };
                // A failing run is how a check stops early.
                if all {
                    panic!("{ALL_REACHED}");
                }
            }
        }
    })
    .name(&format!("facade-diff program {} (reach)", prog.seed))
    // Braid's default plan: DFS deepening its preemption bound, taking turns with sampled
    // runs (random, PCT), which reach in a few thousand runs what needs more preemptions than
    // a DFS of the budget covers.
    .strategy(Strategy::Default)
    .runs(budget)
    .out(std::env::temp_dir().join("facade-diff-reach"))
    .run();
    let reached = std::mem::take(&mut *reached.lock().unwrap_or_else(PoisonError::into_inner));
    let (exhaustive, note) = match report.outcome {
        Verdict::Holds {
            exhaustive,
            coverage,
            ..
        } => (exhaustive, coverage),
        Verdict::Failed(f) if f.message.contains(ALL_REACHED) => {
            (false, "stopped: every outcome sought reached".to_string())
        }
        Verdict::Failed(f) => (false, format!("a run failed: {}", f.message)),
        Verdict::Inconclusive(why) | Verdict::Drifted(why) => (false, why),
    };
    Reach {
        reached,
        runs: runs.load(std::sync::atomic::Ordering::SeqCst),
        exhaustive,
        note,
    }
}

/// Explores every schedule of `prog` under braid (plain DFS, without a preemption bound or
/// within `bound`), at most `budget` runs, at the normal grain or the paranoid one.
pub fn explore(prog: &Arc<Program>, paranoid: bool, bound: Option<usize>, budget: u64) -> Search {
    // Each outcome with the number of the first run that reached it.
    let collected: Arc<Mutex<BTreeMap<Outcome, u64>>> = Arc::default();
    let (p, c) = (prog.clone(), collected.clone());
    let runs = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let r = runs.clone();
    let report = braid::check(move || {
        let (p, c, r) = (p.clone(), c.clone(), r.clone());
        async move {
            let o = on_braid::run_program(p, on_braid::Cfg { paranoid }).await;
            // Recorded only here, at the end of a run in which every task has ended.
            let run = r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            c.lock().unwrap().entry(o).or_insert(run);
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
    // A check that holds makes one more run after its search, a random schedule without the
    // bound (braid's probe of what the test touches): its outcome is none of the search's.
    let searched = match &report.outcome {
        Verdict::Holds { runs, .. } => *runs,
        _ => u64::MAX,
    };
    let outcomes = std::mem::take(&mut *collected.lock().unwrap())
        .into_iter()
        .filter(|&(_, first)| first < searched)
        .map(|(o, _)| o)
        .collect();
    let completed = runs.load(std::sync::atomic::Ordering::SeqCst).min(searched);
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
