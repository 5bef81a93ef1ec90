//! Measuring one row: for each seed, the runs (executions of the program) until the first
//! failure, the wall and CPU time to it, and what else the runs ended in.
//!
//! Clocks: a braid run executes on madsim's runtime, which overrides libc's `clock_gettime`
//! to give virtual time inside a run, so `std::time::Instant` read there (in the panic hook
//! that marks the first failure) would be simulated time. The wall clock here is therefore
//! `CLOCK_MONOTONIC` read by a raw system call, everywhere, and CPU time is `getrusage`'s user +
//! system time of the process (one thread does all the work: braid explores with one job, and
//! turmoil runs every host on the calling thread).

use std::panic;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::turmoil_side::RunEnd;
use crate::{Program, Tool};

/// `CLOCK_MONOTONIC`, past madsim's override of the libc function.
pub fn wall_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            libc::CLOCK_MONOTONIC,
            &mut ts as *mut libc::timespec,
        )
    };
    assert_eq!(rc, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The process's CPU time so far (user + system).
pub fn cpu_now() -> Duration {
    // SAFETY: getrusage fills a zeroed rusage for RUSAGE_SELF.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// SplitMix64: the harness's own seeded randomness (turmoil's per-run seeds, the crash step).
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), up to a negligible modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Executions of a braid check's body so far (each run calls the body once).
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);
/// Each failure of the programs' assertion in a braid check: executions so far (the failing
/// run included), wall clock, CPU time. Shrinking adds many; a check keeps the first few
/// thousand, enough to reach the run its exploration reports.
static FAILURES: Mutex<Vec<(u64, Duration, Duration)>> = Mutex::new(Vec::new());
const KEPT_FAILURES: usize = 4_096;

/// The runs a braid check makes before its exploration's first: with the default strategy,
/// `sim::explore` runs one probe (does the model use time?) and 16 calibration runs (PCT's
/// run length), whose failures it does not look at. The exploration's run `k` (the index a
/// failure's `found_by` names, from 0) is then the check's execution `PRE_EXPLORATION + k + 1`;
/// the measurement checks that this execution did fail.
const PRE_EXPLORATION: u64 = 17;
/// Whether the programs' expected assertion failures are kept off stderr (turmoil's runs;
/// braid's own hook already keeps its runs' panics quiet).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Called by the braid check's body at the start of each run.
pub fn run_started() {
    EXECUTIONS.fetch_add(1, Ordering::Relaxed);
}

/// Wraps braid's panic hook (installed at its first run, which this triggers) with one that
/// notes each failure of the programs' assertion, when and after how many runs: braid shrinks
/// a failure once found, and that time is not the time to find it.
pub fn install_panic_hook() {
    braid::check(|| async {}).runs(1).run();
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let message = info
            .payload_as_str()
            .map(str::to_string)
            .unwrap_or_else(|| info.to_string());
        let ours = message.contains(crate::KV_LOST) || message.contains(crate::DOUBLE_APPLY);
        if ours {
            let mut failures = FAILURES.lock().unwrap_or_else(|e| e.into_inner());
            if failures.len() < KEPT_FAILURES {
                failures.push((EXECUTIONS.load(Ordering::Relaxed), wall_now(), cpu_now()));
            }
        }
        if !(ours && QUIET.load(Ordering::Relaxed)) {
            previous(info);
        }
    }));
}

/// One seed's result.
#[derive(Clone, Debug)]
pub struct SeedResult {
    pub seed: u64,
    /// The bug was found within the cap.
    pub found: bool,
    /// Runs up to and including the first failing one (the cap if not found).
    pub runs: u64,
    /// Wall time to the end of the first failing run (to the cap if not found).
    pub wall: Duration,
    /// CPU time, likewise.
    pub cpu: Duration,
    /// Wall time of the whole check (braid: with shrinking the failure and tracing it).
    pub total_wall: Duration,
    /// turmoil: runs that hung (ended by the simulation's duration).
    pub hung: u64,
    /// Any other failure (braid: a failure that is not the assertion; turmoil: the first other
    /// error), with how many runs ended so.
    pub other: Option<(u64, String)>,
    /// braid: its own account of the failing run ("portfolio, seed 3, run 12").
    pub found_by: Option<String>,
    /// braid: the exploration's runs to the failing one (its index + 1, without the
    /// pre-exploration runs).
    pub explored_runs: Option<u64>,
    /// braid: a probe or calibration run (before the exploration) failed the assertion, and
    /// braid did not look: the first such execution.
    pub unseen_before: Option<u64>,
}

/// Measures `program` under `tool` with `seed`, at most `cap` runs.
pub fn seed(tool: Tool, program: Program, seed: u64, cap: u64) -> SeedResult {
    match tool {
        Tool::Braid => braid_seed(program, seed, cap),
        Tool::Turmoil => turmoil_seed(program, seed, cap),
    }
}

fn braid_seed(program: Program, seed: u64, cap: u64) -> SeedResult {
    QUIET.store(false, Ordering::Relaxed);
    EXECUTIONS.store(0, Ordering::Relaxed);
    FAILURES.lock().unwrap().clear();
    let (w0, c0) = (wall_now(), cpu_now());
    let report = crate::braid_side::check(program, seed, cap);
    let (w1, c1) = (wall_now(), cpu_now());
    let failures = std::mem::take(&mut *FAILURES.lock().unwrap());
    let mut result = SeedResult {
        seed,
        found: false,
        runs: EXECUTIONS.load(Ordering::Relaxed),
        wall: w1 - w0,
        cpu: c1 - c0,
        total_wall: w1 - w0,
        hung: 0,
        other: None,
        found_by: None,
        explored_runs: None,
        unseen_before: failures.iter().map(|f| f.0).find(|&n| n <= PRE_EXPLORATION),
    };
    match &report.outcome {
        braid::Outcome::Failed(f) if f.message.contains(program.bug()) => {
            result.found_by = Some(f.found_by.clone());
            // "portfolio, seed 3, run 12": the exploration's run index.
            let index = f
                .found_by
                .rsplit_once("run ")
                .and_then(|(_, k)| k.trim().parse::<u64>().ok());
            let at = index.map(|k| PRE_EXPLORATION + k + 1);
            match at.and_then(|n| failures.iter().find(|f| f.0 == n)) {
                Some(&(runs, w, c)) => {
                    result.found = true;
                    result.runs = runs;
                    result.explored_runs = index.map(|k| k + 1);
                    result.wall = w - w0;
                    result.cpu = c - c0;
                }
                None => {
                    result.other = Some((
                        1,
                        format!(
                            "found ({}), but execution {at:?} did not fail the assertion: \
                             the runs before braid's exploration are not {PRE_EXPLORATION}",
                            f.found_by
                        ),
                    ))
                }
            }
        }
        braid::Outcome::Failed(f) => {
            result.other = Some((1, format!("{}: {}", f.invariant, f.message)));
            result.found_by = Some(f.found_by.clone());
        }
        braid::Outcome::Holds { .. } => {}
        other => result.other = Some((1, format!("{other:?}"))),
    }
    result
}

fn turmoil_seed(program: Program, seed: u64, cap: u64) -> SeedResult {
    QUIET.store(true, Ordering::Relaxed);
    let mut rng = SplitMix::new(seed);
    let (w0, c0) = (wall_now(), cpu_now());
    let mut result = SeedResult {
        seed,
        found: false,
        runs: 0,
        wall: Duration::ZERO,
        cpu: Duration::ZERO,
        total_wall: Duration::ZERO,
        hung: 0,
        other: None,
        found_by: None,
        explored_runs: None,
        unseen_before: None,
    };
    while result.runs < cap {
        result.runs += 1;
        match crate::turmoil_side::run(program, &mut rng) {
            RunEnd::Passed => {}
            RunEnd::Bug => {
                result.found = true;
                break;
            }
            RunEnd::Hung => result.hung += 1,
            RunEnd::Other(e) => match &mut result.other {
                Some((n, _)) => *n += 1,
                None => result.other = Some((1, e)),
            },
        }
    }
    result.wall = wall_now() - w0;
    result.cpu = cpu_now() - c0;
    result.total_wall = result.wall;
    QUIET.store(false, Ordering::Relaxed);
    result
}

/// The median of per-seed values, a seed that did not find the bug counting as +inf.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        f64::INFINITY
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}
