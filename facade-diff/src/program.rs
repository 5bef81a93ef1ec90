//! A generated program over the facade: data, deterministic from a seed (ChaCha8), printed as
//! readable pseudo-code.
//!
//! The shared objects are fixed: two atomics `a0`, `a1` (observed through braid's std-shaped
//! atomics, each access a scheduling point), a `Mutex<usize>` `m`, a `RwLock<usize>` `rw`, a
//! `Notify` `n`, a `Semaphore` `s` of one permit, a oneshot `os` (`u8`), a bounded mpsc `ch`
//! of capacity 1 (`u8`), a watch `w` (`u8`, initially 0), and the tasks' own join handles.
//! A channel end belongs to one task (the oneshot's two halves to two tasks, the mpsc receiver
//! and the watch sender to one each; every other task that uses the mpsc gets its own sender,
//! and every other that uses the watch its own receiver): ends nobody uses are dropped by the
//! harness before the tasks start. A task may join, abort or look at (`is_finished`) only a
//! task spawned before it, and each task is joined at most once.
//!
//! With [`GenOptions::net`] and [`GenOptions::files`], two more objects (the crate doc says what
//! is compared of them): a TCP connection between two tasks, set up by the harness before the
//! tasks start (each end held whole by one task, or, in a program of three tasks, one end split
//! and one of its halves held by the third task), and a file the tasks share (created by the
//! first append).

use std::fmt;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The number of shared atomics.
pub const ATOMS: usize = 2;

/// An operation that may wait: run with a harness timeout that fires only when no task of the
/// run can move any more (see `OnBlock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOp {
    /// `m.lock()`: observes the value, adds 1, keeps the guard.
    Lock,
    /// `rw.read()`: observes the value, keeps the guard.
    Read,
    /// `rw.write()`: observes the value, adds 1, keeps the guard.
    Write,
    /// `s.acquire()`: keeps the permit.
    Acquire,
    /// `n.notified()`.
    Notified,
    /// `(&mut os_rx).await`: the value, or closed.
    OsRecv,
    /// `ch_tx.send(v)`: ok, or closed.
    Send(u8),
    /// `ch_tx.reserve()`, then (its own operation) `permit.send(v)`.
    Reserve(u8),
    /// `ch_rx.recv()`: the value, or closed.
    Recv,
    /// `w_rx.changed()`: ok, or closed.
    Changed,
    /// Awaits task `t`'s join handle: ok, or cancelled.
    Join(usize),
    /// Reads one byte from this task's end of the connection: the byte, `eof`, or an error's
    /// kind.
    NetRead,
}

/// What a wait that can never complete means to the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnBlock {
    /// The task is stuck there for good: the run ends with it stuck, holding what it holds.
    Stuck,
    /// `timeout(..)`: it gives up, observes `timeout`, and goes on. Both runtimes give up only
    /// when no task can move (in braid, virtual time moves only then; under tokio the harness
    /// checks that every other task waits, or is done, and nothing moved for two ticks).
    TimedOut,
}

/// One operation of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `a[i].load()`: observes the value.
    Load(usize),
    /// `a[i].store(v)`.
    Store(usize, u8),
    /// `a[i].fetch_add(1)`: observes the old value.
    FetchAdd(usize),
    /// A wait, stuck or timed out when it can never complete.
    Wait(WaitOp, OnBlock),
    /// `select!` over two waits (unbiased): observes which won, then what it got.
    Select(WaitOp, WaitOp, OnBlock),
    /// Drops the mutex guard.
    Unlock,
    /// Drops the read guard.
    ReadDrop,
    /// Drops the write guard.
    WriteDrop,
    /// Drops the permit.
    Release,
    /// `n.notify_one()`.
    NotifyOne,
    /// `n.notify_waiters()`.
    NotifyWaiters,
    /// `os_tx.send(v)`: ok, or err (the receiver is gone).
    OsSend(u8),
    /// `os_rx.try_recv()`: the value, empty, or closed.
    OsTryRecv,
    /// Drops the oneshot sender.
    OsDropTx,
    /// Drops the oneshot receiver.
    OsDropRx,
    /// `ch_rx.try_recv()`: the value, empty, or closed.
    TryRecv,
    /// Drops this task's mpsc sender.
    DropTx,
    /// `w_tx.send(v)`: ok, or closed (no receiver left).
    WSend(u8),
    /// `*w_rx.borrow_and_update()`: observes the value.
    WBorrow,
    /// Aborts task `t`.
    Abort(usize),
    /// `t.is_finished()` (a stuck task never finishes): observes the answer.
    IsFinished(usize),
    /// `task::yield_now()`.
    Yield,
    /// Sleeps until no other task can move (a long sleep: both runtimes agree on what it
    /// means).
    Sleep,
    /// `write_all(&[b])` on this task's end of the connection: ok, or an error's kind.
    NetWrite(u8),
    /// `shutdown()` of this task's end's write side: ok, or an error's kind.
    NetShutdown,
    /// Opens the shared file (`append`, `create`), `write_all(&[b])`, and drops it (no flush,
    /// no sync): ok, or an error's kind.
    Append(u8),
    /// `fs::read` of the shared file: its bytes, or an error's kind (`NotFound` before the
    /// first append).
    ReadFile,
}

/// Which task owns which channel end (`None`: nobody uses it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    pub os_tx: Option<usize>,
    pub os_rx: Option<usize>,
    pub ch_rx: Option<usize>,
    pub w_tx: Option<usize>,
    /// Who holds the connection's ends (`None`: no task uses it, and there is none).
    pub net: Option<NetRoles>,
}

/// Per end of the connection (0: the side that connected, 1: the side that accepted), the task
/// that reads it and the task that writes it: the same task holds the end whole, two tasks its
/// halves (`into_split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetRoles {
    pub reader: [usize; 2],
    pub writer: [usize; 2],
}

impl NetRoles {
    /// Whether task `t` reads an end.
    pub fn reads(&self, t: usize) -> bool {
        self.reader.contains(&t)
    }

    /// Whether task `t` writes an end.
    pub fn writes(&self, t: usize) -> bool {
        self.writer.contains(&t)
    }
}

/// A program: tasks spawned in order by the harness, each a list of operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub seed: u64,
    pub tasks: Vec<Vec<Op>>,
    pub roles: Roles,
}

/// What the generator draws from.
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    /// Tasks, at least and at most.
    pub tasks: (usize, usize),
    /// Operations per task, at least and at most.
    pub ops: (usize, usize),
    /// Whether to draw `yield_now` (fair in braid: a deliberate narrowing, see the crate doc).
    pub yields: bool,
    /// Whether to draw operations on a TCP connection between two tasks.
    pub net: bool,
    /// Whether to draw operations on a shared file.
    pub files: bool,
}

/// Without the connection and the file: the corpus whose numbers the bench records (a seed
/// names the same program as before they were added).
impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            tasks: (2, 3),
            ops: (2, 4),
            yields: true,
            net: false,
            files: false,
        }
    }
}

impl WaitOp {
    fn uses_ch_tx(self) -> bool {
        matches!(self, WaitOp::Send(_) | WaitOp::Reserve(_))
    }
}

impl Op {
    /// The waits in it.
    pub fn waits(&self) -> Vec<WaitOp> {
        match *self {
            Op::Wait(w, _) => vec![w],
            Op::Select(a, b, _) => vec![a, b],
            _ => Vec::new(),
        }
    }

    /// Whether it needs this task's mpsc sender.
    pub fn uses_ch_tx(&self) -> bool {
        matches!(self, Op::DropTx) || self.waits().iter().any(|w| w.uses_ch_tx())
    }

    /// Whether it needs this task's watch receiver.
    pub fn uses_w_rx(&self) -> bool {
        matches!(self, Op::WBorrow) || self.waits().contains(&WaitOp::Changed)
    }

    /// Whether it is an operation on the connection.
    pub fn uses_net(&self) -> bool {
        matches!(self, Op::NetWrite(_) | Op::NetShutdown) || self.waits().contains(&WaitOp::NetRead)
    }

    /// Whether it is an operation on the file.
    pub fn uses_file(&self) -> bool {
        matches!(self, Op::Append(_) | Op::ReadFile)
    }
}

impl Program {
    /// Whether task `i` gets an mpsc sender.
    pub fn has_ch_tx(&self, i: usize) -> bool {
        self.tasks[i].iter().any(Op::uses_ch_tx)
    }

    /// Whether task `i` gets a watch receiver.
    pub fn has_w_rx(&self, i: usize) -> bool {
        self.tasks[i].iter().any(Op::uses_w_rx)
    }

    /// The tasks whose join handle task `i` awaits.
    pub fn joins(&self, i: usize) -> Vec<usize> {
        self.tasks[i]
            .iter()
            .flat_map(Op::waits)
            .filter_map(|w| match w {
                WaitOp::Join(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    /// Whether some task aborts task `t`.
    pub fn aborted(&self, t: usize) -> bool {
        self.tasks.iter().flatten().any(|op| *op == Op::Abort(t))
    }

    /// Whether any task yields.
    pub fn yields(&self) -> bool {
        self.tasks.iter().flatten().any(|op| *op == Op::Yield)
    }

    /// Whether any task uses the connection.
    pub fn uses_net(&self) -> bool {
        self.tasks.iter().flatten().any(Op::uses_net)
    }

    /// Whether any task uses the file.
    pub fn uses_file(&self) -> bool {
        self.tasks.iter().flatten().any(Op::uses_file)
    }
}

/// What a task holds while the generator writes its operations.
#[derive(Default)]
struct Holding {
    guard: bool,
    read: bool,
    write: bool,
    permit: bool,
    os_tx: bool,
    os_rx: bool,
    ch_tx: bool,
    /// The read side of an end of the connection.
    net_rd: bool,
    /// The write side of an end of the connection.
    net_wr: bool,
}

/// The program of `seed`.
pub fn generate(seed: u64, opts: &GenOptions) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.gen_range(opts.tasks.0..=opts.tasks.1);
    let pick = |rng: &mut ChaCha8Rng| rng.gen_range(0..n);
    let os_tx = pick(&mut rng);
    let os_rx = (os_tx + rng.gen_range(1..n)) % n;
    let ch_rx = pick(&mut rng);
    let w_tx = pick(&mut rng);
    let net = opts.net.then(|| net_roles(&mut rng, n));
    let mut joined = vec![false; n];
    let mut tasks = Vec::with_capacity(n);
    for me in 0..n {
        let mut h = Holding {
            os_tx: me == os_tx,
            os_rx: me == os_rx,
            ch_tx: me != ch_rx,
            net_rd: net.is_some_and(|r| r.reads(me)),
            net_wr: net.is_some_and(|r| r.writes(me)),
            ..Holding::default()
        };
        let len = rng.gen_range(opts.ops.0..=opts.ops.1);
        let mut ops = Vec::with_capacity(len);
        while ops.len() < len {
            if let Some(op) = draw(&mut rng, me, ch_rx, w_tx, &mut h, &mut joined, opts) {
                ops.push(op);
            }
        }
        tasks.push(ops);
    }
    let mut roles = Roles::default();
    let uses = |t: usize, f: &dyn Fn(&Op) -> bool| tasks[t].iter().any(f);
    if uses(os_tx, &|op| matches!(op, Op::OsSend(_) | Op::OsDropTx)) {
        roles.os_tx = Some(os_tx);
    }
    if uses(os_rx, &|op| {
        matches!(op, Op::OsTryRecv | Op::OsDropRx) || op.waits().contains(&WaitOp::OsRecv)
    }) {
        roles.os_rx = Some(os_rx);
    }
    if uses(ch_rx, &|op| {
        matches!(op, Op::TryRecv) || op.waits().contains(&WaitOp::Recv)
    }) {
        roles.ch_rx = Some(ch_rx);
    }
    if uses(w_tx, &|op| matches!(op, Op::WSend(_))) {
        roles.w_tx = Some(w_tx);
    }
    // The ends are held (and closed at their holders' ends) even by a task that never uses its
    // own: a close is part of what the other end sees.
    if tasks.iter().flatten().any(Op::uses_net) {
        roles.net = net;
    }
    Program { seed, tasks, roles }
}

/// Two tasks hold an end each; in a program of three, half the time the third takes one half
/// of one end (the read half or the write half), so that two tasks use that end at once.
fn net_roles(rng: &mut ChaCha8Rng, n: usize) -> NetRoles {
    let a = rng.gen_range(0..n);
    let b = (a + rng.gen_range(1..n)) % n;
    let mut roles = NetRoles {
        reader: [a, b],
        writer: [a, b],
    };
    if n > 2 && rng.gen_bool(0.5) {
        let third = (0..n).find(|&t| t != a && t != b).expect("three tasks");
        let end = rng.gen_range(0..2);
        if rng.gen_bool(0.5) {
            roles.reader[end] = third;
        } else {
            roles.writer[end] = third;
        }
    }
    roles
}

/// The waits task `me` may start now.
fn waits(me: usize, ch_rx: usize, w_tx: usize, h: &Holding, joined: &[bool]) -> Vec<WaitOp> {
    let mut w = vec![WaitOp::Notified];
    if !h.guard {
        w.push(WaitOp::Lock);
    }
    if !h.read && !h.write {
        w.push(WaitOp::Read);
        w.push(WaitOp::Write);
    }
    if !h.permit {
        w.push(WaitOp::Acquire);
    }
    if h.os_rx {
        w.push(WaitOp::OsRecv);
    }
    if h.ch_tx {
        w.push(WaitOp::Send(1 + me as u8));
        w.push(WaitOp::Reserve(4 + me as u8));
    }
    if me == ch_rx {
        w.push(WaitOp::Recv);
    }
    if me != w_tx {
        w.push(WaitOp::Changed);
    }
    for (t, j) in joined.iter().enumerate().take(me) {
        if !j {
            w.push(WaitOp::Join(t));
        }
    }
    if h.net_rd {
        w.push(WaitOp::NetRead);
    }
    w
}

/// What a wait, once complete, leaves the task holding.
fn took(w: WaitOp, h: &mut Holding, joined: &mut [bool]) {
    match w {
        WaitOp::Lock => h.guard = true,
        WaitOp::Read => h.read = true,
        WaitOp::Write => h.write = true,
        WaitOp::Acquire => h.permit = true,
        WaitOp::OsRecv => h.os_rx = false,
        WaitOp::Join(t) => joined[t] = true,
        _ => {}
    }
}

/// One operation for task `me`, or `None` to draw again.
fn draw(
    rng: &mut ChaCha8Rng,
    me: usize,
    ch_rx: usize,
    w_tx: usize,
    h: &mut Holding,
    joined: &mut [bool],
    opts: &GenOptions,
) -> Option<Op> {
    let on_block = |rng: &mut ChaCha8Rng| {
        if rng.gen_bool(0.25) {
            OnBlock::TimedOut
        } else {
            OnBlock::Stuck
        }
    };
    let atom = rng.gen_range(0..ATOMS);
    // The connection's and the file's operations are drawn from kinds of their own, after the
    // others: without them, a seed draws what it drew before they existed.
    let kinds = if opts.net || opts.files { 21 } else { 15 };
    let op = match rng.gen_range(0..kinds) {
        0 => Op::Load(atom),
        1 => Op::Store(atom, rng.gen_range(1..4)),
        2 => Op::FetchAdd(atom),
        3..=5 => {
            let ws = waits(me, ch_rx, w_tx, h, joined);
            let w = ws[rng.gen_range(0..ws.len())];
            took(w, h, joined);
            Op::Wait(w, on_block(rng))
        }
        6 => {
            // Two waits of different kinds that borrow different things (no joins).
            let ws: Vec<WaitOp> = waits(me, ch_rx, w_tx, h, joined)
                .into_iter()
                .filter(|w| !matches!(w, WaitOp::Join(_) | WaitOp::Reserve(_)))
                .collect();
            let a = ws[rng.gen_range(0..ws.len())];
            let rest: Vec<WaitOp> = ws
                .into_iter()
                .filter(|w| {
                    std::mem::discriminant(w) != std::mem::discriminant(&a)
                        && !(matches!(a, WaitOp::Read | WaitOp::Write)
                            && matches!(w, WaitOp::Read | WaitOp::Write))
                })
                .collect();
            if rest.is_empty() {
                return None;
            }
            let b = rest[rng.gen_range(0..rest.len())];
            // Either may win: the task is taken to hold what either gives (the interpreter
            // drops, at its end, whatever it does hold).
            took(a, h, joined);
            took(b, h, joined);
            Op::Select(a, b, on_block(rng))
        }
        7 => {
            let mut drops = Vec::new();
            if h.guard {
                drops.push(Op::Unlock);
            }
            if h.read {
                drops.push(Op::ReadDrop);
            }
            if h.write {
                drops.push(Op::WriteDrop);
            }
            if h.permit {
                drops.push(Op::Release);
            }
            if h.ch_tx {
                drops.push(Op::DropTx);
            }
            if h.os_tx {
                drops.push(Op::OsDropTx);
            }
            if h.os_rx {
                drops.push(Op::OsDropRx);
            }
            if drops.is_empty() {
                return None;
            }
            let op = drops[rng.gen_range(0..drops.len())];
            match op {
                Op::Unlock => h.guard = false,
                Op::ReadDrop => h.read = false,
                Op::WriteDrop => h.write = false,
                Op::Release => h.permit = false,
                Op::DropTx => h.ch_tx = false,
                Op::OsDropTx => h.os_tx = false,
                _ => h.os_rx = false,
            }
            op
        }
        8 => {
            if rng.gen_bool(0.6) {
                Op::NotifyOne
            } else {
                Op::NotifyWaiters
            }
        }
        9 => {
            if h.os_tx {
                h.os_tx = false;
                Op::OsSend(rng.gen_range(1..4))
            } else if h.os_rx {
                h.os_rx = false;
                Op::OsTryRecv
            } else {
                return None;
            }
        }
        10 => {
            if me == ch_rx {
                Op::TryRecv
            } else if me == w_tx {
                Op::WSend(rng.gen_range(1..4))
            } else {
                return None;
            }
        }
        11 => {
            if me == w_tx {
                Op::WSend(rng.gen_range(1..4))
            } else {
                Op::WBorrow
            }
        }
        12 => {
            if me == 0 {
                return None;
            }
            let t = rng.gen_range(0..me);
            if rng.gen_bool(0.5) {
                Op::Abort(t)
            } else {
                Op::IsFinished(t)
            }
        }
        13 => {
            if !opts.yields {
                return None;
            }
            Op::Yield
        }
        14 => Op::Sleep,
        // Reads are drawn among the waits too.
        15 if h.net_rd => Op::Wait(WaitOp::NetRead, on_block(rng)),
        16 | 17 if h.net_wr => Op::NetWrite(rng.gen_range(1..4)),
        18 if h.net_wr => {
            if rng.gen_bool(0.5) {
                Op::NetWrite(rng.gen_range(1..4))
            } else {
                Op::NetShutdown
            }
        }
        19 if opts.files => Op::Append(rng.gen_range(1..4)),
        20 if opts.files => Op::ReadFile,
        _ => return None,
    };
    Some(op)
}

impl fmt::Display for WaitOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitOp::Lock => write!(f, "m.lock()"),
            WaitOp::Read => write!(f, "rw.read()"),
            WaitOp::Write => write!(f, "rw.write()"),
            WaitOp::Acquire => write!(f, "s.acquire()"),
            WaitOp::Notified => write!(f, "n.notified()"),
            WaitOp::OsRecv => write!(f, "&mut os_rx"),
            WaitOp::Send(v) => write!(f, "ch_tx.send({v})"),
            WaitOp::Reserve(v) => write!(f, "ch_tx.reserve() then permit.send({v})"),
            WaitOp::Recv => write!(f, "ch_rx.recv()"),
            WaitOp::Changed => write!(f, "w_rx.changed()"),
            WaitOp::Join(t) => write!(f, "join(t{t})"),
            WaitOp::NetRead => write!(f, "net.read(1 byte)"),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let timeout = |o: &OnBlock| match o {
            OnBlock::Stuck => "",
            OnBlock::TimedOut => "timeout ",
        };
        match self {
            Op::Load(a) => write!(f, "a{a}.load()"),
            Op::Store(a, v) => write!(f, "a{a}.store({v})"),
            Op::FetchAdd(a) => write!(f, "a{a}.fetch_add(1)"),
            Op::Wait(w, o) => write!(f, "{}{w}.await", timeout(o)),
            Op::Select(a, b, o) => write!(f, "{}select! {{ {a}, {b} }}", timeout(o)),
            Op::Unlock => write!(f, "drop(m guard)"),
            Op::ReadDrop => write!(f, "drop(rw read guard)"),
            Op::WriteDrop => write!(f, "drop(rw write guard)"),
            Op::Release => write!(f, "drop(s permit)"),
            Op::NotifyOne => write!(f, "n.notify_one()"),
            Op::NotifyWaiters => write!(f, "n.notify_waiters()"),
            Op::OsSend(v) => write!(f, "os_tx.send({v})"),
            Op::OsTryRecv => write!(f, "os_rx.try_recv()"),
            Op::OsDropTx => write!(f, "drop(os_tx)"),
            Op::OsDropRx => write!(f, "drop(os_rx)"),
            Op::TryRecv => write!(f, "ch_rx.try_recv()"),
            Op::DropTx => write!(f, "drop(ch_tx)"),
            Op::WSend(v) => write!(f, "w_tx.send({v})"),
            Op::WBorrow => write!(f, "*w_rx.borrow_and_update()"),
            Op::Abort(t) => write!(f, "t{t}.abort()"),
            Op::IsFinished(t) => write!(f, "t{t}.is_finished()"),
            Op::Yield => write!(f, "yield_now()"),
            Op::Sleep => write!(f, "sleep(long)"),
            Op::NetWrite(b) => write!(f, "net.write_all([{b}])"),
            Op::NetShutdown => write!(f, "net.shutdown()"),
            Op::Append(b) => write!(f, "file.append([{b}])"),
            Op::ReadFile => write!(f, "fs::read(file)"),
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.roles;
        let who = |o: Option<usize>| o.map_or("nobody".to_string(), |t| format!("t{t}"));
        writeln!(
            f,
            "program {} (os_tx: {}, os_rx: {}, ch_rx: {}, w_tx: {}; Semaphore(1), mpsc(1)):",
            self.seed,
            who(r.os_tx),
            who(r.os_rx),
            who(r.ch_rx),
            who(r.w_tx)
        )?;
        if let Some(net) = &r.net {
            let end = |e: usize| match net.reader[e] == net.writer[e] {
                true => format!("t{}", net.reader[e]),
                false => format!(
                    "read half t{}, write half t{}",
                    net.reader[e], net.writer[e]
                ),
            };
            writeln!(
                f,
                "  (a TCP connection: the connecting end {}; the accepting end {})",
                end(0),
                end(1)
            )?;
        }
        if self.uses_file() {
            writeln!(f, "  (a shared file, absent at the start)")?;
        }
        for (i, ops) in self.tasks.iter().enumerate() {
            let ops: Vec<String> = ops.iter().map(Op::to_string).collect();
            writeln!(f, "  t{i}: {}", ops.join("; "))?;
        }
        Ok(())
    }
}
