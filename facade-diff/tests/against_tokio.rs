//! The facade against the real thing: generated programs (`facade_diff::program`) run by one
//! interpreter over braid's facade (exhaustive DFS, at the normal grain and at the paranoid
//! one) and over real tokio's multi-thread runtime (many perturbed runs). Every outcome tokio
//! reaches must be one braid reaches, and the two grains must reach the same outcomes: see the
//! crate doc.
//!
//! `cargo test -p facade-diff` runs a small corpus, `SMALL` (the sync primitives, tasks and
//! time) and `SMALL_WORLD` (the same, with a TCP connection and a file); the bench size, with
//! both, runs
//! with `cargo test --release -p facade-diff --test against_tokio bench_size -- --ignored
//! --nocapture` (`FACADE_DIFF_PROGRAMS`, `FACADE_DIFF_RUNS`, `FACADE_DIFF_BUDGET`,
//! `FACADE_DIFF_SEED`, `FACADE_DIFF_OPS` set the size, the tokio runs per program, braid's run
//! budget per search, the first seed and the operations per task; `FACADE_DIFF_WORLD=0` leaves
//! the connection and the file out, `FACADE_DIFF_UNFINISHED` says whether programs whose search
//! did not finish are compared (by default, with the connection and the file),
//! `FACADE_DIFF_REACH_BUDGET` how far braid seeks a tokio outcome such a search missed;
//! `FACADE_DIFF_SHOW=1` prints every program's counts). The `finding_*` tests are the smallest
//! programs of the findings the crate doc lists; each failed before its fix.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use facade_diff::outcome::Outcome;
use facade_diff::program::{generate, GenOptions, NetRoles, OnBlock, Op, Program, Roles, WaitOp};
use facade_diff::{explore, reach, Reach, Search};

/// The interpreter over real tokio, with perturbation in the harness only.
mod on_tokio {
    use std::time::Duration;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::sync::atomic as at;
    use tokio as rt;

    /// One run: its perturbation seed.
    pub struct Cfg {
        pub seed: u64,
    }

    /// One task's perturbation.
    pub struct Hooks {
        rng: ChaCha8Rng,
        /// Whether it may yield: not in a task that some task aborts (tokio drops an aborted
        /// task where it returns `Pending`: a yield would add such a place to the program).
        yields: bool,
    }

    fn hooks(cfg: &Cfg, prog: &Program, task: usize) -> Hooks {
        Hooks {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ ((task as u64 + 1) << 56)),
            yields: !prog.aborted(task),
        }
    }

    /// Before every facade call, drop and end: nothing, a yield or two, or a short spin.
    async fn point(h: &mut Hooks) {
        match h.rng.gen_range(0..10) {
            0 | 1 if h.yields => rt::task::yield_now().await,
            2 if h.yields => {
                rt::task::yield_now().await;
                rt::task::yield_now().await;
            }
            3 | 4 => {
                for _ in 0..h.rng.gen_range(0..3_000) {
                    std::hint::spin_loop();
                }
            }
            _ => {}
        }
    }

    /// Real time: a wait gives up after two ticks in which every other task waited or had
    /// ended and nothing moved.
    const TICK: Duration = Duration::from_millis(2);
    const QUIET_TICKS: u32 = 2;

    /// A tick is quiet only if no task moved since the last one.
    fn moved(now: u64, seen: u64) -> bool {
        now != seen
    }

    async fn settle_wait(run: &Run) {
        let mut spins = 0u32;
        while !run.all_settled() {
            spins += 1;
            if spins < 200 {
                rt::task::yield_now().await;
            } else {
                rt::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }

    /// The shared file: in a temporary directory of this run's own, removed after it.
    fn scratch_file() -> (std::path::PathBuf, Box<dyn std::any::Any + Send>) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        (dir.path().join("shared"), Box::new(dir))
    }

    /// What stuck tasks kept (an end of the connection): closed now, so no socket leaks.
    fn release_kept(kept: Vec<Box<dyn std::any::Any + Send>>) {
        drop(kept);
    }

    facade_diff::interpreter!();
}

/// The small corpus `cargo test` runs.
const SMALL: Size = Size {
    programs: 30,
    runs: 300,
    budget: 10_000,
    first_seed: 1,
    max_ops: 3,
    world: false,
    unfinished_too: false,
    reach_budget: 0,
};

/// The small corpus with the connection and the file: most of its programs use one or both.
/// Their searches rarely finish (each write's arrival and each close's is a step of a delivery
/// task, free to come between any two of the tasks'), so they are compared unfinished too.
const SMALL_WORLD: Size = Size {
    programs: 20,
    world: true,
    unfinished_too: true,
    reach_budget: 200_000,
    ..SMALL
};

#[derive(Clone, Copy, Debug)]
struct Size {
    programs: u64,
    /// Tokio runs per program.
    runs: u64,
    /// Braid runs per search before a program counts as too big.
    budget: u64,
    first_seed: u64,
    /// Operations per task, at most.
    max_ops: usize,
    /// Whether programs may use the TCP connection and the file.
    world: bool,
    /// Whether programs whose search did not finish are compared with tokio too: every tokio
    /// outcome that search did not reach is sought by a bigger one (`reach`), and one that is
    /// not reached there either is a missing outcome (within the preemptions it covered, or
    /// for good if it finished).
    unfinished_too: bool,
    /// Braid runs at most of that bigger search.
    reach_budget: u64,
}

/// What one program gave.
struct Case {
    program: Arc<Program>,
    /// Braid's exhaustive search, no bound: the reference tokio is compared with.
    normal: Search,
    /// The grains compared: unbounded when the paranoid search finishes (then `grain_normal`
    /// is `normal`), else within the first of `GRAIN_BOUNDS` both finish; `None` if none.
    grain_bound: Option<Option<usize>>,
    grain_normal: Option<Search>,
    paranoid: Search,
    /// For a bounded comparison where the normal grain reached more: the paranoid grain one
    /// preemption further, where those outcomes may appear (the paranoid grain's extra points
    /// can cost a schedule a preemption: a fair yield must then wait for another task's step).
    paranoid_next: Option<Search>,
    tokio: BTreeSet<Outcome>,
    tokio_runs: u64,
    /// Where the search did not finish and tokio reached outcomes it did not: the search for
    /// them.
    reach: Option<Reach>,
}

/// The preemption bounds the grains are compared within when the paranoid grain's unbounded
/// search is too big: within a bound, every schedule of the normal grain has a paranoid one of
/// the same preemptions (a preemption at an operation's own point is one at the paranoid point
/// right before it), so the sets are equal unless an operation hides an interleaving. Within
/// none, the weakest, is what most programs with the connection afford.
const GRAIN_BOUNDS: [usize; 3] = [2, 1, 0];

impl Case {
    /// Tokio outcomes braid's normal grain never reaches (where its search did not finish:
    /// that the search for them did not reach either).
    fn missing(&self) -> Vec<&Outcome> {
        let sought = |o: &&Outcome| self.reach.as_ref().is_some_and(|r| r.reached.contains(*o));
        self.tokio
            .difference(&self.normal.outcomes)
            .filter(|o| !sought(o))
            .collect()
    }

    /// The outcomes braid reached: its search's, and those the search for tokio's found.
    fn braid_outcomes(&self) -> usize {
        self.normal.outcomes.len() + self.reach.as_ref().map_or(0, |r| r.reached.len())
    }

    /// Whether tokio's outcomes were compared with braid's.
    fn compared(&self) -> bool {
        self.tokio_runs > 0
    }

    /// Outcomes the normal grain reaches within the bound and the paranoid grain only with one
    /// preemption more: not a hidden interleaving, reported apart.
    fn one_preemption_more(&self) -> Vec<&Outcome> {
        let Some(next) = &self.paranoid_next else {
            return Vec::new();
        };
        self.grain_diff_raw()
            .0
            .into_iter()
            .filter(|o| next.outcomes.contains(*o))
            .collect()
    }

    /// Outcomes one grain reaches and the other does not (normal only, paranoid only), leaving
    /// out those the paranoid grain reaches with one preemption more.
    fn grain_diff(&self) -> (Vec<&Outcome>, Vec<&Outcome>) {
        let (normal_only, paranoid_only) = self.grain_diff_raw();
        let more = self.one_preemption_more();
        (
            normal_only
                .into_iter()
                .filter(|o| !more.contains(o))
                .collect(),
            paranoid_only,
        )
    }

    fn grain_diff_raw(&self) -> (Vec<&Outcome>, Vec<&Outcome>) {
        let normal = match (self.grain_bound, &self.grain_normal) {
            (None, _) => return (Vec::new(), Vec::new()),
            (Some(None), _) => &self.normal,
            (Some(Some(_)), Some(n)) => n,
            (Some(Some(_)), None) => unreachable!("a bounded comparison has its normal search"),
        };
        (
            normal
                .outcomes
                .difference(&self.paranoid.outcomes)
                .collect(),
            self.paranoid
                .outcomes
                .difference(&normal.outcomes)
                .collect(),
        )
    }
}

/// Runs `prog` `runs` times under real tokio: fresh multi-thread runtimes of 2 to 4 workers,
/// one per batch of 64, with 2 to 32 runs at a time in each.
fn tokio_outcomes(prog: &Arc<Program>, runs: u64) -> BTreeSet<Outcome> {
    const BATCH: u64 = 64;
    let mut outcomes = BTreeSet::new();
    let mut done = 0;
    let mut batch = 0u64;
    while done < runs {
        // Runs at once: from nearly alone on the workers (the tightest races) to 32 sharing
        // them (each task's steps spread among other runs' tasks). Many more would queue a
        // woken task behind so much work that a wait could give up while it is still runnable.
        let workers = 2 + (batch % 3) as usize;
        let at_once: u64 = [2, 8, 16, 32][(batch % 4) as usize];
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let n = BATCH.min(runs - done);
        let got: Vec<Outcome> = rt.block_on(async {
            let spawn = |set: &mut tokio::task::JoinSet<Outcome>, i: u64| {
                let seed = (prog.seed << 32) ^ (done + i) ^ (batch << 20);
                set.spawn(on_tokio::run_program(prog.clone(), on_tokio::Cfg { seed }));
            };
            // `at_once` runs in flight: a new one starts as soon as one ends.
            let mut set = tokio::task::JoinSet::new();
            let mut next = 0;
            while next < n.min(at_once) {
                spawn(&mut set, next);
                next += 1;
            }
            let mut got = Vec::with_capacity(n as usize);
            while let Some(outcome) = set.join_next().await {
                got.push(outcome.expect("a harness run does not panic"));
                if next < n {
                    spawn(&mut set, next);
                    next += 1;
                }
            }
            got
        });
        outcomes.extend(got);
        done += n;
        batch += 1;
    }
    outcomes
}

fn bound_name(b: Option<Option<usize>>) -> String {
    match b {
        None => "not compared: too big".to_string(),
        Some(None) => "unbounded".to_string(),
        Some(Some(b)) => format!("within {b} preemptions"),
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
        .unwrap_or(default)
}

fn run_corpus(size: Size) -> Vec<Case> {
    let opts = GenOptions {
        ops: (2, size.max_ops),
        net: size.world,
        files: size.world,
        ..GenOptions::default()
    };
    let show = std::env::var("FACADE_DIFF_SHOW").is_ok();
    let start = Instant::now();
    let mut cases = Vec::new();
    for seed in size.first_seed..size.first_seed + size.programs {
        let program = Arc::new(generate(seed, &opts));
        let t = Instant::now();
        let normal = explore(&program, false, None, size.budget);
        // The paranoid grain's unbounded search only where it may finish (it is typically tens
        // to hundreds of times the normal one); else straight to the bounded comparison.
        let mut paranoid = if normal.finished && normal.runs.saturating_mul(50) <= size.budget {
            explore(&program, true, None, size.budget)
        } else {
            Search {
                outcomes: BTreeSet::new(),
                finished: false,
                runs: 0,
                note: "not tried".to_string(),
            }
        };
        let mut grain_bound = None;
        let mut grain_normal = None;
        if paranoid.finished && normal.finished {
            grain_bound = Some(None);
        } else {
            for bound in GRAIN_BOUNDS {
                let n = explore(&program, false, Some(bound), size.budget);
                if !n.finished {
                    continue;
                }
                let p = explore(&program, true, Some(bound), size.budget);
                if p.finished {
                    grain_bound = Some(Some(bound));
                    grain_normal = Some(n);
                    paranoid = p;
                    break;
                }
            }
        }
        // The normal grain reached more within the bound: look one preemption further.
        let mut paranoid_next = None;
        if let (Some(Some(bound)), Some(n)) = (grain_bound, &grain_normal) {
            if !n.outcomes.is_subset(&paranoid.outcomes) {
                paranoid_next = Some(explore(&program, true, Some(bound + 1), size.budget * 20));
            }
        }
        let braid_time = t.elapsed();
        let t = Instant::now();
        // Tokio where braid's set is complete, or (`unfinished_too`) complete within some
        // preemption bound: elsewhere there is nothing to compare.
        let (tokio, tokio_runs) = if normal.finished || size.unfinished_too {
            (tokio_outcomes(&program, size.runs), size.runs)
        } else {
            (BTreeSet::new(), 0)
        };
        let tokio_time = t.elapsed();
        let t = Instant::now();
        let unreached: BTreeSet<Outcome> = tokio.difference(&normal.outcomes).cloned().collect();
        let reach = (!normal.finished && !unreached.is_empty())
            .then(|| reach(&program, &unreached, size.reach_budget));
        let case = Case {
            program,
            normal,
            grain_bound,
            grain_normal,
            paranoid,
            paranoid_next,
            tokio,
            tokio_runs,
            reach,
        };
        if show {
            eprintln!(
                "program {seed}: braid {} schedules ({} outcomes{}), paranoid {} ({} outcomes, {}) in {:.1}s; tokio {} runs, {} outcomes, in {:.1}s; {}{} missing",
                case.normal.runs,
                case.normal.outcomes.len(),
                if case.normal.finished { "" } else { ", unfinished" },
                case.paranoid.runs,
                case.paranoid.outcomes.len(),
                bound_name(case.grain_bound),
                braid_time.as_secs_f64(),
                case.tokio_runs,
                case.tokio.len(),
                tokio_time.as_secs_f64(),
                case.reach.as_ref().map_or(String::new(), |r| format!(
                    "{} sought ({} reached in {} runs: {}, {:.1}s), ",
                    r.reached.len() + case.missing().len(),
                    r.reached.len(),
                    r.runs,
                    r.note,
                    t.elapsed().as_secs_f64()
                )),
                case.missing().len(),
            );
        }
        cases.push(case);
        if size.programs >= 50 && cases.len() % 25 == 0 {
            eprintln!(
                "facade-diff: {} programs in {:.0}s, {} with a missing outcome so far",
                cases.len(),
                start.elapsed().as_secs_f64(),
                cases.iter().filter(|c| !c.missing().is_empty()).count()
            );
        }
    }
    eprintln!(
        "facade-diff: {} programs from seed {}{} in {:.1}s",
        size.programs,
        size.first_seed,
        if size.world {
            " (with the connection and the file)"
        } else {
            ""
        },
        start.elapsed().as_secs_f64()
    );
    cases
}

/// The report of a corpus: counts, then every program with a missing outcome or a grain
/// difference, printed with what differs. `Err` if there is any.
fn verdict(cases: &[Case], size: Size) -> Result<String, String> {
    let finished = cases.iter().filter(|c| c.normal.finished).count();
    let unfinished_compared = cases
        .iter()
        .filter(|c| !c.normal.finished && c.compared())
        .count();
    let left_out = cases.iter().filter(|c| !c.compared()).count();
    let searches: Vec<&Reach> = cases.iter().filter_map(|c| c.reach.as_ref()).collect();
    let sought: usize = cases
        .iter()
        .filter_map(|c| Some(c.reach.as_ref()?.reached.len() + c.missing().len()))
        .sum();
    let unfinished = match size.unfinished_too {
        false => String::new(),
        true => format!(
            ", and {unfinished_compared} more compared unfinished (complete within the preemptions their budget covered; {sought} tokio outcomes they did not reach sought by {} searches of up to {} runs, {} reached)",
            searches.len(),
            size.reach_budget,
            searches.iter().map(|r| r.reached.len()).sum::<usize>(),
        ),
    };
    let grains_at = |b: Option<Option<usize>>| cases.iter().filter(|c| c.grain_bound == b).count();
    let paranoid_compared = format!(
        "{} unbounded, {} within 2 preemptions, {} within 1, {} within 0, {} not",
        grains_at(Some(None)),
        grains_at(Some(Some(2))),
        grains_at(Some(Some(1))),
        grains_at(Some(Some(0))),
        grains_at(None)
    );
    let schedules: u64 = cases.iter().map(|c| c.normal.runs).sum();
    let paranoid_schedules: u64 = cases.iter().map(|c| c.paranoid.runs).sum();
    let tokio_runs: u64 = cases.iter().map(|c| c.tokio_runs).sum();
    // Every program counts, those that yield too: `tokio::task::yield_now` lets the yielder go
    // on at once, as tokio may (once per cycle of yields, the next being fair), so a task that
    // yields and then aborts another may do so before that one starts.
    let missing: usize = cases.iter().map(|c| c.missing().len()).sum();
    let grain: usize = cases
        .iter()
        .map(|c| {
            let (a, b) = c.grain_diff();
            a.len() + b.len()
        })
        .sum();
    let one_more: usize = cases.iter().map(|c| c.one_preemption_more().len()).sum();
    let failed: Vec<&Case> = cases
        .iter()
        .filter(|c| !c.normal.note.is_empty() && c.normal.note.starts_with("a run failed"))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} programs (seeds {}..{}): braid's search finished on {finished}{unfinished} ({left_out} left out: over {} runs), the grains compared on {paranoid_compared}; {schedules} braid schedules (unbounded searches), {paranoid_schedules} paranoid (the compared searches); {tokio_runs} tokio runs ({} per compared program); {missing} outcomes tokio reaches and braid does not; {grain} outcomes on which the grains differ ({one_more} more that the paranoid grain reaches only with one preemption more, not counted)",
        cases.len(),
        size.first_seed,
        size.first_seed + size.programs - 1,
        size.budget,
        size.runs,
    );
    if size.world {
        let _ = writeln!(out, "{}", world_counts(cases));
    }
    for c in &failed {
        let _ = writeln!(
            out,
            "\nbraid failed a run of program {}: {}\n{}",
            c.program.seed, c.normal.note, c.program
        );
    }
    for c in cases {
        let missing = c.missing();
        let (normal_only, paranoid_only) = c.grain_diff();
        let more = c.one_preemption_more();
        if missing.is_empty()
            && normal_only.is_empty()
            && paranoid_only.is_empty()
            && more.is_empty()
        {
            continue;
        }
        let _ = write!(out, "\n{}", c.program);
        let _ = writeln!(
            out,
            "  braid: {} outcomes in {} schedules{}; paranoid: {} in {} ({}); tokio: {} in {} runs",
            c.normal.outcomes.len(),
            c.normal.runs,
            match (c.normal.finished, c.compared()) {
                (true, _) => String::new(),
                (false, true) => format!(" (unfinished: {})", c.normal.note),
                (false, false) => " (unfinished: not compared with tokio)".to_string(),
            },
            c.paranoid.outcomes.len(),
            c.paranoid.runs,
            bound_name(c.grain_bound),
            c.tokio.len(),
            c.tokio_runs
        );
        if let Some(r) = &c.reach {
            let _ = writeln!(
                out,
                "  sought in braid, after its search: {} reached, {} not, in {} schedules ({})",
                r.reached.len(),
                missing.len(),
                r.runs,
                r.note
            );
        }
        for o in &missing {
            let also = if c.grain_bound == Some(None) && !c.paranoid.outcomes.contains(o) {
                " (the paranoid grain misses it too)"
            } else {
                ""
            };
            let _ = writeln!(out, "  tokio reaches, braid does not{also}: {o}");
        }
        if !missing.is_empty() {
            let reached = c.reach.iter().flat_map(|r| &r.reached);
            for o in c.normal.outcomes.iter().chain(reached).take(12) {
                let _ = writeln!(out, "    (braid reaches: {o})");
            }
            if c.braid_outcomes() > 12 {
                let _ = writeln!(out, "    (and {} more)", c.braid_outcomes() - 12);
            }
        }
        for o in &paranoid_only {
            let _ = writeln!(
                out,
                "  only the paranoid grain reaches ({}): {o}",
                bound_name(c.grain_bound)
            );
        }
        for o in &normal_only {
            let _ = writeln!(
                out,
                "  only the normal grain reaches ({}): {o}",
                bound_name(c.grain_bound)
            );
        }
        for o in &more {
            let _ = writeln!(
                out,
                "  reached by the paranoid grain only one preemption further ({} + 1): {o}",
                bound_name(c.grain_bound)
            );
        }
    }
    if missing + grain + failed.len() == 0 {
        Ok(out)
    } else {
        Err(out)
    }
}

/// How many programs used the connection and the file, and the outcomes each runtime reached
/// on the programs compared with tokio: all, and those that use either.
fn world_counts(cases: &[Case]) -> String {
    let net = cases.iter().filter(|c| c.program.uses_net());
    let file = cases.iter().filter(|c| c.program.uses_file());
    let compared = |c: &&Case| c.compared();
    let (net_compared, file_compared) = (
        net.clone().filter(compared).count(),
        file.clone().filter(compared).count(),
    );
    let world = |c: &&Case| c.program.uses_net() || c.program.uses_file();
    let outcomes = |only_world: bool| -> (usize, usize) {
        cases
            .iter()
            .filter(compared)
            .filter(|c| !only_world || world(c))
            .fold((0, 0), |(b, t), c| {
                (b + c.braid_outcomes(), t + c.tokio.len())
            })
    };
    let (braid_all, tokio_all) = outcomes(false);
    let (braid_world, tokio_world) = outcomes(true);
    format!(
        "the connection used by {} programs ({net_compared} compared with tokio), the file by {} ({file_compared} compared), either by {}; outcomes reached on the compared programs: braid {braid_all}, tokio {tokio_all} (on those that use the connection or the file: braid {braid_world}, tokio {tokio_world})",
        net.count(),
        file.count(),
        cases.iter().filter(world).count(),
    )
}

fn check(size: Size) {
    let cases = run_corpus(size);
    match verdict(&cases, size) {
        Ok(report) => eprintln!("{report}"),
        Err(report) => panic!("the facade hides interleavings:\n{report}"),
    }
}

/// The small corpus: tokio's outcomes within braid's, and both grains the same.
///
/// It failed on the facade before its missing scheduling points were added (program 2 of the
/// small corpus: the last mpsc sender's drop shared a step with the task's send and end).
#[test]
fn tokio_outcomes_are_braid_outcomes_and_the_grains_agree() {
    check(SMALL);
}

/// The same, on programs over a TCP connection and a file too (20 programs, 18 of which use
/// them; about 40 s in the debug build). Before finding 1 was fixed (crate doc), seeds 15 and
/// 18 gave 2 outcomes tokio reaches and braid did not. Findings 2 and 3, still open, show on
/// other seeds (a task aborted in an append, a file read after an unflushed one: seeds 89 and
/// 77 at this size), in their own ignored tests below.
#[test]
fn with_a_connection_and_a_file_too() {
    check(SMALL_WORLD);
}

/// The bench size (run it in release): 300 programs, 5,000 tokio runs each. On main after
/// issue 27 (42 min on 2 shared cores): braid's unbounded search finished on 78 programs (222
/// over 100,000 runs: the finer facade makes searches bigger, and those are not compared with
/// tokio), 25,023,245 braid schedules, 390,000 tokio runs; 0 outcomes tokio reaches and braid
/// does not; the grains compared on 296 (4 unbounded, 174 within 2 preemptions, 118 within 1),
/// 0 outcomes on which they differ, and 1 (program 168) that the paranoid grain reaches only one
/// preemption further. (On the facade before issue 27's points: 7 outcomes tokio reached and
/// braid did not, in programs 2, 128, 228 and 255.) Those programs are `FACADE_DIFF_WORLD=0`'s.
///
/// With the connection and the file (the default since issue 29), at a smaller size
/// (`FACADE_DIFF_PROGRAMS=40 FACADE_DIFF_RUNS=1000`, 7 min): the connection used by 34
/// programs, the file by 21; braid's search finished on 3, the 37 others compared unfinished
/// (20 tokio outcomes they had not reached sought, 14 reached); outcomes reached: braid 101,
/// tokio 100; 6 outcomes tokio reaches and braid does not, each a `ConnectionReset` (finding 1;
/// programs 3, 15 and 18); the grains compared on all 40 (6 within 2 preemptions, 7 within 1,
/// 27 within 0), 0 outcomes on which they differ. Without them at that size (30 programs, 2
/// min): 0 and 0.
#[test]
#[ignore = "bench size: cargo test --release -p facade-diff --test against_tokio bench_size -- --ignored --nocapture"]
fn bench_size() {
    check(Size {
        programs: env("FACADE_DIFF_PROGRAMS", 300),
        runs: env("FACADE_DIFF_RUNS", 5_000),
        budget: env("FACADE_DIFF_BUDGET", 100_000),
        first_seed: env("FACADE_DIFF_SEED", 1),
        max_ops: env("FACADE_DIFF_OPS", 4) as usize,
        world: env("FACADE_DIFF_WORLD", 1) != 0,
        unfinished_too: env("FACADE_DIFF_UNFINISHED", env("FACADE_DIFF_WORLD", 1)) != 0,
        reach_budget: env("FACADE_DIFF_REACH_BUDGET", 500_000),
    });
}

/// A seed names one program, with or without the connection and the file.
#[test]
fn a_seed_names_one_program() {
    let world = GenOptions {
        net: true,
        files: true,
        ..GenOptions::default()
    };
    for opts in [GenOptions::default(), world] {
        for seed in [1, 7, 99] {
            assert_eq!(generate(seed, &opts), generate(seed, &opts));
        }
    }
}

/// With the connection and the file, most programs use them: each of their operations is drawn.
#[test]
fn the_connection_and_the_file_are_drawn() {
    let opts = GenOptions {
        ops: (2, 3),
        net: true,
        files: true,
        ..GenOptions::default()
    };
    let programs: Vec<Program> = (1..=200).map(|seed| generate(seed, &opts)).collect();
    let share = |used: &dyn Fn(&Op) -> bool| {
        programs
            .iter()
            .filter(|p| p.tasks.iter().flatten().any(used))
            .count()
    };
    let net = share(&|op| op.uses_net());
    let file = share(&|op| op.uses_file());
    assert!(
        net >= 100 && file >= 60,
        "the connection in {net} of 200, the file in {file}"
    );
    for (name, used) in [
        ("a read", share(&|op| op.waits().contains(&WaitOp::NetRead))),
        ("a write", share(&|op| matches!(op, Op::NetWrite(_)))),
        ("a shutdown", share(&|op| *op == Op::NetShutdown)),
        ("an append", share(&|op| matches!(op, Op::Append(_)))),
        ("a file read", share(&|op| *op == Op::ReadFile)),
        (
            "a split end",
            programs
                .iter()
                .filter(|p| p.roles.net.is_some_and(|r| r.reader != r.writer))
                .count(),
        ),
    ] {
        assert!(used >= 10, "{name} in {used} of 200 programs");
    }
}

/// A hand-written program (a finding's smallest case); with the connection, t0 holds the end
/// that connected and t1 the one that accepted.
fn hand_written(tasks: Vec<Vec<Op>>, net: bool) -> Arc<Program> {
    let roles = Roles {
        net: net.then_some(NetRoles {
            reader: [0, 1],
            writer: [0, 1],
        }),
        ..Roles::default()
    };
    Arc::new(Program {
        seed: 0,
        tasks,
        roles,
    })
}

/// Tokio's outcomes of `program` in `runs` runs that braid does not reach (sought in up to
/// 200,000 of its runs), after printing what each reached.
fn braid_misses(program: &Arc<Program>, runs: u64) -> Vec<Outcome> {
    let tokio = tokio_outcomes(program, runs);
    let braid = reach(program, &tokio, 200_000);
    eprint!("{program}");
    for o in &tokio {
        let by = if braid.reached.contains(o) {
            "both"
        } else {
            "tokio only"
        };
        eprintln!("  {by}: {o}");
    }
    eprintln!("  (braid: {} runs, {})", braid.runs, braid.note);
    tokio.difference(&braid.reached).cloned().collect()
}

/// Finding 1 (see the crate doc; fixed): closing a stream with bytes it has not read resets the
/// connection (Linux sends an RST, not a FIN): the other end's next write fails with
/// `ConnectionReset`, and its reads after that error see the end. Braid closes with the end of
/// the stream and accepts the next write (its reads then fail for good). And after the end of
/// the stream has arrived, a write that provokes a reset leaves reads at the end on Linux,
/// where braid's fail with `ConnectionReset`.
#[test]
fn finding_1_a_close_with_unread_bytes_resets_the_connection() {
    use OnBlock::Stuck;
    let read = Op::Wait(WaitOp::NetRead, Stuck);
    // t0 closes (at its end) once t1's byte has arrived, unread.
    let unread = hand_written(
        vec![
            vec![Op::Wait(WaitOp::Notified, Stuck)],
            vec![
                Op::NetWrite(1),
                Op::NotifyOne,
                Op::Wait(WaitOp::Join(0), Stuck),
                Op::NetWrite(2),
                read,
                read,
            ],
        ],
        true,
    );
    // t0 closes at once, having read nothing (nothing was sent): a FIN.
    let after_the_end = hand_written(
        vec![
            vec![],
            vec![Op::Wait(WaitOp::Join(0), Stuck), Op::NetWrite(1), read],
        ],
        true,
    );
    let missing: Vec<Outcome> = [unread, after_the_end]
        .iter()
        .flat_map(|p| braid_misses(p, 300))
        .collect();
    assert!(
        missing.is_empty(),
        "tokio reaches, braid does not: {missing:?}"
    );
}

/// Finding 2 (see the crate doc; fixed): under tokio each fs call is a blocking task awaited, a
/// place where it returns `Pending`, so an aborted task stops inside an append (the file created
/// and empty, or the first append in it and not the second); braid's fs calls did not suspend,
/// so an abort landed before the task's first step or not at all.
#[test]
fn finding_2_an_abort_lands_inside_an_fs_call() {
    let program = hand_written(
        vec![
            vec![Op::Append(1), Op::Append(2)],
            vec![Op::Abort(0), Op::Sleep, Op::ReadFile],
        ],
        false,
    );
    let missing = braid_misses(&program, 2_000);
    assert!(
        missing.is_empty(),
        "tokio reaches, braid does not: {missing:?}"
    );
}

/// Finding 3 (see the crate doc; fixed): tokio's `File::poll_write` hands the bytes to a
/// blocking task and returns at once; unflushed, they land later, so a task's own read after its
/// two appends may see neither, one, or both in either order. Braid's write landed within its
/// call.
#[test]
fn finding_3_an_unflushed_append_lands_later() {
    let program = hand_written(
        vec![vec![Op::Append(1), Op::Append(2), Op::ReadFile], vec![]],
        false,
    );
    let missing = braid_misses(&program, 2_000);
    assert!(
        missing.is_empty(),
        "tokio reaches, braid does not: {missing:?}"
    );
}

/// Finding 4 (see the crate doc; fixed): tokio's blocking pool may finish an fs call before its
/// caller first polls the handle (`OpenOptions::open` was ready at its first poll in 1,854 of
/// 20,000 runs on this machine), and the caller goes on in the same poll, where an abort does not
/// stop it: a task aborted in the middle of its poll, before its store, still stores, appends
/// and ends (program 96001 of the bench). Braid's caller always waited once, and was dropped
/// there. braid's side is checked exactly (the outcome tokio reaches only by chance).
#[test]
fn finding_4_an_fs_call_may_be_ready_at_its_first_poll() {
    let program = hand_written(
        vec![
            vec![Op::Store(1, 1), Op::Append(3)],
            vec![Op::Abort(0), Op::Load(1)],
        ],
        false,
    );
    // Within two preemptions: t0 preempted at its store by t1's abort and load.
    let braid = explore(&program, false, Some(2), 200_000);
    assert!(braid.finished, "{}", braid.note);
    let shown: Vec<String> = braid.outcomes.iter().map(|o| o.to_string()).collect();
    // t1's load comes after its abort and sees t0's store not yet made; t0 ends all the same.
    let wanted = "t0: [ok] done; t1: [0] done; finally a = [0, 1]";
    assert!(
        shown.iter().any(|o| o == wanted),
        "braid does not reach {wanted:?}: {shown:#?}"
    );
    let missing = braid_misses(&program, 2_000);
    assert!(
        missing.is_empty(),
        "tokio reaches, braid does not: {missing:?}"
    );
}

/// A harness finding (fixed in `on_braid::moved`; the facade was not at fault): in program
/// 80124 of the bench corpus, t0 sleeps (until no other task can move) holding the receiver of
/// a full channel, while t1 waits to send into it. Under tokio either wait may end first; the
/// sleeper's end closes the channel and t1's send fails with `closed`. Braid's harness counted
/// a wait's progress from the wait's start, so the sleep, begun before t1's last move, never
/// ended first, and t1 was always stuck. The paranoid grain, with a point between t0's
/// `try_recv` and its sleep, reached `closed`: the grains differed.
#[test]
fn harness_either_wait_may_end_first_at_an_instant() {
    let opts = GenOptions {
        ops: (2, 3),
        ..GenOptions::default()
    };
    let program = Arc::new(generate(80_124, &opts));
    let normal = explore(&program, false, None, 200_000);
    assert!(normal.finished, "{}", normal.note);
    let closed = normal
        .outcomes
        .iter()
        .any(|o| o.to_string().contains("t1: [ok, 0, closed] done"));
    assert!(closed, "{program}: {:?}", normal.outcomes);
}
