//! Reduction over tokio's mpsc channels: generated programs over one channel (unbounded, or
//! bounded to one or two slots), searched by DFS with the reduction a user test gets (visited
//! states, identified by trace) and by plain DFS, must reach the same outcomes and verdicts.
//!
//! A channel is four engine objects (`src/tokio/mpsc/chan.rs`): the queue, the number of
//! senders, whether every sender is gone, and the receiver's waker, so that a clone or a drop
//! of a sender that is not the last touches only the count, and the last one's drop only what
//! a receive of an empty channel reads. These programs are what that split must be right
//! about: two or three sender tasks (their senders cloned by the main task before it spawns
//! them, or one cloned and handed to a child by a sender task) that send, `try_send`, reserve a
//! slot and send in it or give it up, clone a sender and drop the clone, ask `is_closed`, and
//! drop their sender early; and the main task, the receiver, that receives (`recv` up to the
//! end, `try_recv`), asks `is_closed` and `len`, and may close or drop the receiver before the
//! end. Every task's results, in order, are the run's outcome. `BRAID_DIFF_PROGRAMS` sets how
//! many programs (from seed 1; default 150).

use std::fmt;
use std::sync::Arc;

use braid::engine::strategy::Reduction;
use braid::tokio::sync::mpsc::{self, error::TryRecvError};
use braid::tokio::{self, task::JoinHandle};
use braid::Strategy;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reach::{reach, Reached};

#[path = "support/reach.rs"]
mod reach;

/// Plain DFS runs before a program counts as too big to compare.
const BUDGET: u64 = 4_000;
/// Programs compared (seeds from 1).
const PROGRAMS: u64 = 150;
/// The preemption bound of the exact comparison where unbounded plain DFS does not finish.
const BOUND: usize = 2;
/// Random runs whose outcomes a finished unbounded reduced DFS must all have reached.
const SAMPLES: u64 = 1_000;

/// A sender task's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendOp {
    Send(u8),
    TrySend(u8),
    /// Reserves a slot (bounded) and sends in it.
    Reserve(u8),
    /// Reserves a slot (bounded) and gives it up unused.
    ReserveDrop,
    /// Clones the task's sender and drops the clone.
    CloneDrop,
    IsClosed,
    /// Drops the task's sender now (its later operations find none).
    Drop,
}

/// The receiver's operation (the main task's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecvOp {
    Recv,
    TryRecv,
    IsClosed,
    Len,
    Close,
    /// Drops the receiver now (its later operations find none).
    Drop,
}

struct Program {
    seed: u64,
    /// `None`: unbounded.
    capacity: Option<usize>,
    /// Per sender task, its operations.
    senders: Vec<Vec<SendOp>>,
    /// Sender task 0 spawns the last sender task, with a clone of its own sender made after
    /// its first operation (else the main task spawns every one, with clones made before).
    nested: bool,
    receiver: Vec<RecvOp>,
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.capacity {
            Some(n) => format!("channel({n})"),
            None => "unbounded_channel()".to_string(),
        };
        writeln!(f, "program {} ({kind}, nested {})", self.seed, self.nested)?;
        for (i, ops) in self.senders.iter().enumerate() {
            writeln!(f, "  sender {i}: {ops:?}")?;
        }
        writeln!(f, "  receiver: {:?}", self.receiver)
    }
}

fn generate(seed: u64) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let capacity = match rng.gen_range(0..3) {
        0 => None,
        n => Some(n),
    };
    let bounded = capacity.is_some();
    let send_op = |rng: &mut ChaCha8Rng| -> SendOp {
        let v = rng.gen_range(1..=3u8);
        match rng.gen_range(0..10) {
            0..=2 => SendOp::Send(v),
            3 => SendOp::TrySend(v),
            4 if bounded => SendOp::Reserve(v),
            5 if bounded => SendOp::ReserveDrop,
            4..=6 => SendOp::CloneDrop,
            7 => SendOp::IsClosed,
            8 => SendOp::Drop,
            _ => SendOp::Send(v),
        }
    };
    let senders = (0..rng.gen_range(2..=3))
        .map(|_| {
            (0..rng.gen_range(1..=2))
                .map(|_| send_op(&mut rng))
                .collect()
        })
        .collect();
    let receiver = (0..rng.gen_range(1..=2))
        .map(|_| match rng.gen_range(0..10) {
            0..=3 => RecvOp::Recv,
            4 | 5 => RecvOp::TryRecv,
            6 => RecvOp::IsClosed,
            7 => RecvOp::Len,
            8 => RecvOp::Close,
            _ => RecvOp::Drop,
        })
        .collect();
    Program {
        seed,
        capacity,
        senders,
        nested: rng.gen_bool(0.3),
        receiver,
    }
}

/// Either flavour's sender.
enum Tx {
    Bounded(mpsc::Sender<u8>),
    Unbounded(mpsc::UnboundedSender<u8>),
}

impl Clone for Tx {
    fn clone(&self) -> Self {
        match self {
            Tx::Bounded(s) => Tx::Bounded(s.clone()),
            Tx::Unbounded(s) => Tx::Unbounded(s.clone()),
        }
    }
}

impl Tx {
    async fn op(&self, op: SendOp) -> String {
        match (op, self) {
            (SendOp::Send(v), Tx::Bounded(s)) => format!("{:?}", s.send(v).await.is_ok()),
            (SendOp::Send(v), Tx::Unbounded(s)) => format!("{:?}", s.send(v).is_ok()),
            (SendOp::TrySend(v), Tx::Bounded(s)) => match s.try_send(v) {
                Ok(()) => "ok".to_string(),
                Err(mpsc::error::TrySendError::Full(_)) => "full".to_string(),
                Err(mpsc::error::TrySendError::Closed(_)) => "closed".to_string(),
            },
            (SendOp::TrySend(v), Tx::Unbounded(s)) => format!("{:?}", s.send(v).is_ok()),
            (SendOp::Reserve(v), Tx::Bounded(s)) => match s.reserve().await {
                Ok(permit) => {
                    permit.send(v);
                    "reserved".to_string()
                }
                Err(_) => "closed".to_string(),
            },
            (SendOp::ReserveDrop, Tx::Bounded(s)) => match s.reserve().await {
                Ok(permit) => {
                    drop(permit);
                    "given up".to_string()
                }
                Err(_) => "closed".to_string(),
            },
            (SendOp::Reserve(_) | SendOp::ReserveDrop, Tx::Unbounded(_)) => {
                unreachable!("only a bounded channel reserves")
            }
            (SendOp::CloneDrop, s) => {
                drop(s.clone());
                "cloned".to_string()
            }
            (SendOp::IsClosed, Tx::Bounded(s)) => format!("{:?}", s.is_closed()),
            (SendOp::IsClosed, Tx::Unbounded(s)) => format!("{:?}", s.is_closed()),
            (SendOp::Drop, _) => unreachable!("handled by the task"),
        }
    }
}

/// The nested sender task's operations, and its handle once spawned.
type Child = Option<(Vec<SendOp>, Option<JoinHandle<Vec<String>>>)>;

/// A sender task: its operations in order (and, if it spawns the nested task, that task's
/// results after its own).
async fn sender(tx: Tx, ops: Vec<SendOp>, child: Option<Vec<SendOp>>) -> Vec<String> {
    let mut log = Vec::new();
    let mut tx = Some(tx);
    let mut child: Child = child.map(|ops| (ops, None));
    for (i, op) in ops.into_iter().enumerate() {
        if i == 1 {
            spawn_child(&tx, &mut child);
        }
        let entry = match (op, &tx) {
            (SendOp::Drop, Some(_)) => {
                tx = None;
                "dropped".to_string()
            }
            (_, None) => "none".to_string(),
            (op, Some(s)) => s.op(op).await,
        };
        log.push(entry);
    }
    spawn_child(&tx, &mut child);
    drop(tx);
    if let Some((_, Some(handle))) = child {
        log.push("|".to_string());
        log.extend(handle.await.expect("the child ends"));
    }
    log
}

/// Spawns the nested sender task (once), with a clone of `tx` (or no sender, if it is gone).
fn spawn_child(tx: &Option<Tx>, child: &mut Child) {
    if let Some((ops, handle @ None)) = child {
        match tx {
            Some(tx) => *handle = Some(tokio::spawn(sender(tx.clone(), ops.clone(), None))),
            None => *handle = Some(tokio::spawn(async { vec!["no sender".to_string()] })),
        }
    }
}

/// Either flavour's receiver.
enum Rx {
    Bounded(mpsc::Receiver<u8>),
    Unbounded(mpsc::UnboundedReceiver<u8>),
}

impl Rx {
    async fn op(&mut self, op: RecvOp) -> String {
        let try_recv = |r: Result<u8, TryRecvError>| match r {
            Ok(v) => format!("{v}"),
            Err(TryRecvError::Empty) => "empty".to_string(),
            Err(TryRecvError::Disconnected) => "disconnected".to_string(),
        };
        match (op, self) {
            (RecvOp::Recv, Rx::Bounded(r)) => format!("{:?}", r.recv().await),
            (RecvOp::Recv, Rx::Unbounded(r)) => format!("{:?}", r.recv().await),
            (RecvOp::TryRecv, Rx::Bounded(r)) => try_recv(r.try_recv()),
            (RecvOp::TryRecv, Rx::Unbounded(r)) => try_recv(r.try_recv()),
            (RecvOp::IsClosed, Rx::Bounded(r)) => format!("closed {:?}", r.is_closed()),
            (RecvOp::IsClosed, Rx::Unbounded(r)) => format!("closed {:?}", r.is_closed()),
            (RecvOp::Len, Rx::Bounded(r)) => format!("len {}", r.len()),
            (RecvOp::Len, Rx::Unbounded(r)) => format!("len {}", r.len()),
            (RecvOp::Close, Rx::Bounded(r)) => {
                r.close();
                "close".to_string()
            }
            (RecvOp::Close, Rx::Unbounded(r)) => {
                r.close();
                "close".to_string()
            }
            (RecvOp::Drop, _) => unreachable!("handled by the receiver"),
        }
    }
}

/// One run of `p`: the receiver's results, then each sender task's.
async fn run(p: Arc<Program>) -> Vec<String> {
    let (tx, rx) = match p.capacity {
        Some(n) => {
            let (tx, rx) = mpsc::channel(n);
            (Tx::Bounded(tx), Rx::Bounded(rx))
        }
        None => {
            let (tx, rx) = mpsc::unbounded_channel();
            (Tx::Unbounded(tx), Rx::Unbounded(rx))
        }
    };
    let mut ops = p.senders.clone();
    let child = match p.nested {
        true => ops.pop(),
        false => None,
    };
    let mut txs: Vec<Tx> = (1..ops.len()).map(|_| tx.clone()).collect();
    txs.insert(0, tx);
    let mut handles = Vec::new();
    for (i, (tx, ops)) in txs.into_iter().zip(ops).enumerate() {
        let child = if i == 0 { child.clone() } else { None };
        handles.push(tokio::spawn(sender(tx, ops, child)));
    }
    let mut out = Vec::new();
    let mut rx = Some(rx);
    for op in &p.receiver {
        let entry = match (op, &mut rx) {
            (RecvOp::Drop, Some(_)) => {
                rx = None;
                "dropped".to_string()
            }
            (_, None) => "none".to_string(),
            (op, Some(r)) => r.op(*op).await,
        };
        out.push(entry);
    }
    // Gone before the senders are awaited: a sender waiting for a slot then fails.
    drop(rx);
    for h in handles {
        out.push(h.await.expect("a sender task ends").join(","));
    }
    out
}

/// A search of `program` as a user test: each completed run's outcome.
fn search(program: &Arc<Program>, strategy: Strategy, runs: u64) -> Reached<Vec<String>> {
    let p = program.clone();
    reach(
        &format!("mpsc {}", program.seed),
        strategy,
        runs,
        move || run(p.clone()),
    )
}

fn dfs(program: &Arc<Program>, bound: Option<usize>, reduction: Reduction) -> Reached<Vec<String>> {
    let strategy = Strategy::Dfs {
        preemption_bound: bound,
        reduction,
    };
    search(program, strategy, BUDGET)
}

/// What the differential found over a range of programs.
#[derive(Default, Debug)]
struct Tally {
    /// Programs whose plain DFS finished, unbounded and within `BOUND` preemptions (compared
    /// exactly), and their runs under plain and reduced DFS.
    unbounded: u64,
    bounded: u64,
    plain_runs: u64,
    reduced_runs: u64,
    /// Programs whose unbounded reduced DFS finished (compared with random runs).
    sampled: u64,
    mismatches: Vec<String>,
}

impl Tally {
    /// Exact: where plain DFS within `bound` finishes within `BUDGET`, reduced DFS within it
    /// must reach the same outcomes, and the same verdict. Whether it was compared.
    fn exact(&mut self, program: &Arc<Program>, bound: Option<usize>) -> bool {
        let plain = dfs(program, bound, Reduction::None);
        if let Some(failed) = &plain.failed {
            panic!("a generated program failed: {failed}\n{program}");
        }
        if !plain.finished {
            return false;
        }
        let reduced = dfs(program, bound, Reduction::VisitedStates);
        self.plain_runs += plain.runs;
        self.reduced_runs += reduced.runs;
        if let Some(how) = reduced.differs_from_plain(&plain) {
            self.mismatches
                .push(format!("reduced DFS within {bound:?}: {how}\n{program}"));
        }
        true
    }

    /// Sampled: where unbounded reduced DFS finishes within `BUDGET`, every outcome `SAMPLES`
    /// random runs reach must be among its outcomes.
    fn sampled(&mut self, program: &Arc<Program>) {
        let reduced = dfs(program, None, Reduction::VisitedStates);
        if !reduced.finished {
            return;
        }
        let sampled = search(program, Strategy::Random, SAMPLES);
        self.sampled += 1;
        if let Some(how) = reduced.misses_sampled(&sampled) {
            self.mismatches
                .push(format!("unbounded reduced DFS: {how}\n{program}"));
        }
    }
}

/// Every comparison on programs `1..=programs`: unbounded where plain DFS finishes, else
/// within `BOUND`; and with random runs.
fn differential(programs: u64) -> Tally {
    let mut t = Tally::default();
    for seed in 1..=programs {
        let program = Arc::new(generate(seed));
        if t.exact(&program, None) {
            t.unbounded += 1;
        } else if t.exact(&program, Some(BOUND)) {
            t.bounded += 1;
        }
        t.sampled(&program);
    }
    t
}

#[test]
fn reduced_dfs_over_mpsc_channels_reaches_what_plain_dfs_reaches() {
    let programs = std::env::var("BRAID_DIFF_PROGRAMS").map_or(PROGRAMS, |s| s.parse().unwrap());
    let t = differential(programs);
    eprintln!(
        "{programs} programs: {} compared with plain DFS unbounded, {} within {BOUND} \
         preemptions (plain {} runs, reduced {}); {} compared with {SAMPLES} random runs",
        t.unbounded, t.bounded, t.plain_runs, t.reduced_runs, t.sampled
    );
    assert!(
        t.mismatches.is_empty(),
        "{} mismatches:\n{}",
        t.mismatches.len(),
        t.mismatches.join("\n")
    );
    assert!(
        t.unbounded + t.bounded >= programs / 2 && t.sampled >= programs / 3,
        "too few programs compared"
    );
    assert!(t.reduced_runs < t.plain_runs, "nothing reduced");
}
