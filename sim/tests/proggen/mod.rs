//! Small random concurrent programs over the engine's primitives, for differential tests of the
//! DFS reductions ("the checker checks itself").
//!
//! A `Program` is data: objects (atomics, mutexes, rwlocks, bounded channels, notifies), two to
//! four tasks whose bodies are short statement lists (atomic loads, stores, fetch_adds,
//! compare_exchanges and racy load+store increments; critical sections; channel sends and
//! receives; notifies; `choose`; bounded loops with a `sim::checkpoint` at their head; spawns of
//! child tasks that capture the parent's registers; accept loops that spawn one handler per
//! request), and invariants over the history they emit. It is generated from a `u64` seed with
//! ChaCha8, and prints as readable pseudo-code (`Display`), so a mismatch can be reproduced and
//! read. `GenModel` runs it as a `sim::Model` that declares `reduction_safe` (every shared value
//! lives in an engine object) and, optionally, `state_visible` (each loop's checkpoint names all
//! of its task's locals: the loop's id and counter and every register).
//!
//! With `GenOptions::spin`, programs also yield fairly (`sim::yield_now`) and spin-wait on
//! flags (`loop { checkpoint; r = read flag; if r >= want { break } yield_now }`, the flag set by
//! a statement another task owes, or by nobody: a livelock), and a quarter of the seeds draw the
//! spin-wait template; such programs run with a step bound of `SPIN_MAX_STEPS`. Without it, every
//! seed draws the program it drew before the option existed; with it, the spawn-capture and
//! accept-loop programs are the same as without, random programs differ.
//!
//! A task's locals are its registers (`REGS` small integers, all reads land in one) and, in a
//! loop, the loop counter; nothing is shared outside engine objects. Programs are finite: loops
//! run a fixed number of times, and the one unbounded shape (an accept loop over `recv_idle`)
//! only goes round once per message.

// Shared by the differential test and the bench example; each uses a part.
#![allow(dead_code)]

pub mod check;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use sim::invariant::Invariant;
use sim::sync::{channel, Atomic, Mutex, Notify, Receiver, RwLock, Sender};
use sim::{Grain, History, Model, Monitor};

/// Registers per task.
pub const REGS: usize = 3;

type Regs = [usize; REGS];

/// A block of statements, shared (a spawned task runs its body from an owned handle).
pub type Block = Arc<Vec<Stmt>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    Const(usize),
    Reg(usize),
}

impl Val {
    fn get(self, regs: &Regs) -> usize {
        match self {
            Val::Const(c) => c,
            Val::Reg(r) => regs[r],
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Const(c) => write!(f, "{c}"),
            Val::Reg(r) => write!(f, "r{r}"),
        }
    }
}

/// What a spin-wait reads: an atomic's value, a mutex's or a rwlock's contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    Atomic(usize),
    Mutex(usize),
    RwLock(usize),
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flag::Atomic(a) => write!(f, "a{a}.load()"),
            Flag::Mutex(m) => write!(f, "*m{m}.lock()"),
            Flag::RwLock(rw) => write!(f, "*rw{rw}.read()"),
        }
    }
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Yield,
    /// `sim::yield_now()`: a fair yield.
    YieldNow,
    /// A spin-wait: `loop { checkpoint(id, regs); r<dst> = read flag; if r<dst> >= want {
    /// break } yield_now }`. It ends once some other task sets the flag; a flag that is never
    /// set is a livelock.
    Spin {
        id: usize,
        flag: Flag,
        want: usize,
        dst: usize,
    },
    /// `r = choose(n)`.
    Choose {
        n: usize,
        dst: usize,
    },
    Load {
        a: usize,
        dst: usize,
    },
    Store {
        a: usize,
        val: Val,
    },
    /// `r = a.fetch_add(1)`, then emits `inc a`.
    FetchAdd {
        a: usize,
        dst: usize,
    },
    /// `r = a.load(); [yield;] a.store(r + 1)`, then emits `inc a` (a lost update waiting to
    /// happen).
    RacyInc {
        a: usize,
        dst: usize,
        pause: bool,
    },
    /// `r = a.compare_exchange(current, new).is_ok()`.
    Cas {
        a: usize,
        current: Val,
        new: Val,
        dst: usize,
    },
    /// `g = m.lock(); r = *g; [inner;] *g += add`.
    Lock {
        m: usize,
        dst: usize,
        add: usize,
        inner: Option<Box<Stmt>>,
    },
    /// `g = rw.read(); r = *g; [inner;]`.
    Read {
        rw: usize,
        dst: usize,
        inner: Option<Box<Stmt>>,
    },
    /// `g = rw.write(); [inner;] *g += add`.
    Write {
        rw: usize,
        add: usize,
        inner: Option<Box<Stmt>>,
    },
    Send {
        ch: usize,
        val: Val,
    },
    /// `r = ch.try_send(val).is_ok()`.
    TrySend {
        ch: usize,
        val: Val,
        dst: usize,
    },
    Recv {
        ch: usize,
        dst: usize,
    },
    Notify {
        n: usize,
    },
    Notified {
        n: usize,
        idle: bool,
    },
    /// Emits `tag<tag>=<val>`.
    Emit {
        tag: u8,
        val: Val,
    },
    /// Emits `bad(<val>)`, which the `no-bad` invariant rejects.
    Bad {
        val: Val,
    },
    If {
        reg: usize,
        eq: usize,
        then: Block,
    },
    /// `for i in 0..iters { checkpoint(id, i, regs); body }` (never nested).
    Loop {
        id: usize,
        iters: usize,
        body: Block,
    },
    /// Spawns `name` running `body` with a copy of this task's registers.
    Spawn {
        name: String,
        body: Block,
    },
    /// `loop { checkpoint(id, i, regs); req = ch.recv(); spawn name(regs with r<dst> = req) }`,
    /// `count` times, or forever with `recv_idle` (`count` None).
    Accept {
        id: usize,
        ch: usize,
        count: Option<usize>,
        dst: usize,
        name: String,
        handler: Block,
    },
}

/// An invariant of a generated program, over its history (and, at quiescence, its atomics).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inv {
    /// No `bad` event.
    NoBad,
    /// No `tag<then>` event after a `tag<first>` event.
    Never { first: u8, then: u8 },
    /// At quiescence, the `tag` events' values sum to at most `bound`.
    SumAtMost { tag: u8, bound: usize },
    /// At quiescence, atomic `a` holds its initial value plus its `inc` events.
    Counts { a: usize },
    /// No two `tag` events carry the same value.
    Distinct { tag: u8 },
    /// The `tag` events' values never decrease.
    Ascending { tag: u8 },
}

impl Inv {
    pub fn name(&self) -> String {
        match self {
            Inv::NoBad => "no-bad".into(),
            Inv::Never { first, then } => format!("never-tag{then}-after-tag{first}"),
            Inv::SumAtMost { tag, bound } => format!("sum-tag{tag}-at-most-{bound}"),
            Inv::Counts { a } => format!("counts-a{a}"),
            Inv::Distinct { tag } => format!("distinct-tag{tag}"),
            Inv::Ascending { tag } => format!("ascending-tag{tag}"),
        }
    }
}

/// Which template the program was built from (for reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Random,
    /// setter / parent / child: the child captures what the parent loaded.
    SpawnCapture,
    /// A server receives requests in a loop and spawns a handler per request.
    AcceptLoop,
    /// Spin-waits on flags (`GenOptions::spin`): a producer and a consumer, a flag nobody sets,
    /// or two tasks that each wait for the other.
    SpinWait,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub seed: u64,
    pub shape: Shape,
    pub grain: Grain,
    /// Initial values.
    pub atomics: Vec<usize>,
    pub mutexes: usize,
    pub rwlocks: usize,
    /// Capacities.
    pub channels: Vec<usize>,
    pub notifies: usize,
    pub tasks: Vec<(String, Block)>,
    pub invariants: Vec<Inv>,
    /// Whether a broken invariant ends the run (as in any model). Off, the invariants only
    /// record their messages: a diagnostic, to tell the reductions' handling of runs cut short
    /// by a violation from the rest.
    pub stop: bool,
    /// Built to livelock: some task spins on a flag nobody sets in any schedule, so every search
    /// must report `livelock` (the spin-wait template's guarantee; random programs may livelock
    /// too, without saying so here).
    pub livelocks: bool,
    /// The first `members` tasks are declared interchangeable (`Model::symmetric_members`,
    /// spawned with `sim::spawn_member`); 0 for the generator's programs (`tests/symmetry.rs`
    /// makes the symmetric ones).
    pub members: usize,
}

// ---------------------------------------------------------------------------------------------
// Events and invariants.

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Ev {
    Tag(u8, usize),
    Inc(usize),
    Bad(usize),
}

impl fmt::Display for Ev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ev::Tag(t, v) => write!(f, "tag{t}={v}"),
            Ev::Inc(a) => write!(f, "inc a{a}"),
            Ev::Bad(v) => write!(f, "bad({v})"),
        }
    }
}

thread_local! {
    /// Every violation message the generated invariants produced on this thread (invariant name,
    /// message): `check` clears it before an exploration and reads it after.
    static MESSAGES: RefCell<BTreeSet<String>> = const { RefCell::new(BTreeSet::new()) };
}

/// Clears the record of violation messages (see `MESSAGES`).
pub fn clear_messages() {
    MESSAGES.with(|m| m.borrow_mut().clear());
}

/// Takes the record of violation messages since the last `clear_messages`.
pub fn take_messages() -> BTreeSet<String> {
    MESSAGES.with(|m| std::mem::take(&mut *m.borrow_mut()))
}

/// One generated invariant and what it has seen so far in the run.
struct Check {
    inv: Inv,
    name: String,
    stop: bool,
    /// The atomic and its initial value (`Counts`).
    atomic: Option<(Rc<Atomic<usize>>, usize)>,
    seen_first: bool,
    sum: usize,
    incs: usize,
    values: BTreeSet<usize>,
    last: Option<usize>,
}

impl Check {
    fn new(inv: Inv, stop: bool, atomics: &[Rc<Atomic<usize>>], init: &[usize]) -> Self {
        let atomic = match inv {
            Inv::Counts { a } => Some((atomics[a].clone(), init[a])),
            _ => None,
        };
        Check {
            name: inv.name(),
            inv,
            stop,
            atomic,
            seen_first: false,
            sum: 0,
            incs: 0,
            values: BTreeSet::new(),
            last: None,
        }
    }

    fn judge(&mut self, event: &Ev) -> Result<(), String> {
        match (&self.inv, event) {
            (Inv::NoBad, Ev::Bad(v)) => Err(format!("bad event (value {v})")),
            (Inv::Never { first, then }, Ev::Tag(t, v)) => {
                if *t == *then && self.seen_first {
                    return Err(format!("tag{then}={v} after a tag{first}"));
                }
                if *t == *first {
                    self.seen_first = true;
                }
                Ok(())
            }
            (Inv::SumAtMost { tag, .. }, Ev::Tag(t, v)) if t == tag => {
                self.sum += v;
                Ok(())
            }
            (Inv::Counts { a }, Ev::Inc(b)) if a == b => {
                self.incs += 1;
                Ok(())
            }
            (Inv::Distinct { tag }, Ev::Tag(t, v)) if t == tag => {
                if self.values.insert(*v) {
                    Ok(())
                } else {
                    Err(format!("tag{tag}={v} twice"))
                }
            }
            (Inv::Ascending { tag }, Ev::Tag(t, v)) if t == tag => {
                let last = self.last.replace(*v);
                match last {
                    Some(l) if l > *v => Err(format!("tag{tag}={v} after tag{tag}={l}")),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn record(&self, result: Result<(), String>) -> Result<(), String> {
        if let Err(m) = &result {
            MESSAGES.with(|all| all.borrow_mut().insert(format!("{}: {m}", self.name)));
        }
        if self.stop {
            result
        } else {
            Ok(())
        }
    }
}

impl Invariant<Ev> for Check {
    fn name(&self) -> &str {
        &self.name
    }

    fn observe(&mut self, event: &Ev) -> Result<(), String> {
        let result = self.judge(event);
        self.record(result)
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        let result = match &self.inv {
            Inv::SumAtMost { tag, bound } if self.sum > *bound => {
                Err(format!("tag{tag} values sum to {} > {bound}", self.sum))
            }
            Inv::Counts { a } => {
                let (atomic, init) = self.atomic.as_ref().expect("Counts has its atomic");
                let got = atomic.peek();
                let want = init + self.incs;
                if got == want {
                    Ok(())
                } else {
                    Err(format!(
                        "a{a} is {got} after {} increments from {init}",
                        self.incs
                    ))
                }
            }
            _ => Ok(()),
        };
        self.record(result)
    }
}

// ---------------------------------------------------------------------------------------------
// Running a program.

struct Env {
    atomics: Vec<Rc<Atomic<usize>>>,
    mutexes: Vec<Mutex<usize>>,
    rwlocks: Vec<RwLock<usize>>,
    senders: Vec<Sender<usize>>,
    receivers: Vec<Receiver<usize>>,
    notifies: Vec<Notify>,
    history: History<Ev>,
}

impl Program {
    /// Creates the objects, spawns the tasks, returns the monitor (`Model::start`).
    pub fn start(&self) -> Rc<dyn Monitor> {
        let env = self.objects();
        for (i, (name, body)) in self.tasks.iter().enumerate() {
            let run = run_block(env.clone(), body.clone(), [0; REGS]);
            match i < self.members {
                true => sim::spawn_member(name.clone(), i, run),
                false => sim::spawn(name.clone(), run),
            };
        }
        env.history.monitor()
    }

    /// The program as a user test's body (`braid::check`, issue 30 item 2: the differential
    /// "written as user tests"): the objects made and the tasks spawned by the test's main
    /// task, which waits for them and returns the final values of the atomics and mutexes.
    /// The invariants are watched as a user's `Log` is (`sim::watch`).
    pub async fn run_as_test(&self) -> Vec<usize> {
        let env = self.objects();
        sim::watch(env.history.monitor());
        let tasks: Vec<_> = self
            .tasks
            .iter()
            .map(|(name, body)| {
                let run = run_block(env.clone(), body.clone(), [0; REGS]);
                sim::task::spawn_joinable(name.clone(), run)
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
        let mut finals: Vec<usize> = env.atomics.iter().map(|a| a.peek()).collect();
        for m in &env.mutexes {
            finals.push(*m.lock().await);
        }
        finals
    }

    /// The program's objects, fresh for a run.
    fn objects(&self) -> Rc<Env> {
        let atomics: Vec<Rc<Atomic<usize>>> = self
            .atomics
            .iter()
            .enumerate()
            .map(|(i, &v)| Rc::new(Atomic::new(format!("a{i}"), v)))
            .collect();
        let invariants: Vec<Box<dyn Invariant<Ev>>> = self
            .invariants
            .iter()
            .map(|inv| {
                Box::new(Check::new(inv.clone(), self.stop, &atomics, &self.atomics))
                    as Box<dyn Invariant<Ev>>
            })
            .collect();
        let history = History::new(invariants);
        let (senders, receivers) = self
            .channels
            .iter()
            .enumerate()
            .map(|(i, &cap)| channel::<usize>(format!("c{i}"), cap))
            .unzip();
        let env = Rc::new(Env {
            atomics,
            mutexes: (0..self.mutexes)
                .map(|i| Mutex::new(format!("m{i}"), 0))
                .collect(),
            rwlocks: (0..self.rwlocks)
                .map(|i| RwLock::new(format!("rw{i}"), 0))
                .collect(),
            senders,
            receivers,
            notifies: (0..self.notifies)
                .map(|i| Notify::new(format!("n{i}")))
                .collect(),
            history,
        });
        env
    }
}

async fn run_block(env: Rc<Env>, block: Block, mut regs: Regs) {
    exec(&env, &block, &mut regs).await;
}

type Step<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

fn exec<'a>(env: &'a Rc<Env>, block: &'a [Stmt], regs: &'a mut Regs) -> Step<'a> {
    Box::pin(async move {
        for stmt in block {
            step(env, stmt, regs).await;
        }
    })
}

fn step<'a>(env: &'a Rc<Env>, stmt: &'a Stmt, regs: &'a mut Regs) -> Step<'a> {
    Box::pin(async move {
        match stmt {
            Stmt::Yield => sim::yield_point("yield").await,
            Stmt::YieldNow => sim::yield_now().await,
            Stmt::Spin {
                id,
                flag,
                want,
                dst,
            } => loop {
                // The loop carries the registers only: a round that read the same value comes
                // back to the same state.
                sim::checkpoint("spin", &(*id, *regs));
                regs[*dst] = match flag {
                    Flag::Atomic(a) => env.atomics[*a].load().await,
                    Flag::Mutex(m) => *env.mutexes[*m].lock().await,
                    Flag::RwLock(rw) => *env.rwlocks[*rw].read().await,
                };
                if regs[*dst] >= *want {
                    break;
                }
                sim::yield_now().await;
            },
            Stmt::Choose { n, dst } => regs[*dst] = sim::choose(*n).await,
            Stmt::Load { a, dst } => regs[*dst] = env.atomics[*a].load().await,
            Stmt::Store { a, val } => env.atomics[*a].store(val.get(regs)).await,
            Stmt::FetchAdd { a, dst } => {
                regs[*dst] = env.atomics[*a].fetch_add(1).await;
                env.history.emit(Ev::Inc(*a));
            }
            Stmt::RacyInc { a, dst, pause } => {
                let v = env.atomics[*a].load().await;
                regs[*dst] = v;
                if *pause {
                    sim::yield_point("between").await;
                }
                env.atomics[*a].store(v + 1).await;
                env.history.emit(Ev::Inc(*a));
            }
            Stmt::Cas {
                a,
                current,
                new,
                dst,
            } => {
                let (current, new) = (current.get(regs), new.get(regs));
                let ok = env.atomics[*a].compare_exchange(current, new).await.is_ok();
                regs[*dst] = usize::from(ok);
            }
            Stmt::Lock { m, dst, add, inner } => {
                let mut g = env.mutexes[*m].lock().await;
                regs[*dst] = *g;
                if let Some(inner) = inner {
                    step(env, inner, regs).await;
                }
                *g += add;
            }
            Stmt::Read { rw, dst, inner } => {
                let g = env.rwlocks[*rw].read().await;
                regs[*dst] = *g;
                if let Some(inner) = inner {
                    step(env, inner, regs).await;
                }
                drop(g);
            }
            Stmt::Write { rw, add, inner } => {
                let mut g = env.rwlocks[*rw].write().await;
                if let Some(inner) = inner {
                    step(env, inner, regs).await;
                }
                *g += add;
            }
            Stmt::Send { ch, val } => env.senders[*ch].send(val.get(regs)).await,
            Stmt::TrySend { ch, val, dst } => {
                regs[*dst] = usize::from(env.senders[*ch].try_send(val.get(regs)).await.is_ok());
            }
            Stmt::Recv { ch, dst } => regs[*dst] = env.receivers[*ch].recv().await,
            Stmt::Notify { n } => env.notifies[*n].notify_one().await,
            Stmt::Notified { n, idle: false } => env.notifies[*n].notified().await,
            Stmt::Notified { n, idle: true } => env.notifies[*n].notified_idle().await,
            Stmt::Emit { tag, val } => env.history.emit(Ev::Tag(*tag, val.get(regs))),
            Stmt::Bad { val } => env.history.emit(Ev::Bad(val.get(regs))),
            Stmt::If { reg, eq, then } => {
                if regs[*reg] == *eq {
                    exec(env, then, regs).await;
                }
            }
            Stmt::Loop { id, iters, body } => {
                for i in 0..*iters {
                    // Everything that lives across iterations: where (the loop), the counter,
                    // every register.
                    sim::checkpoint("loop", &(*id, i, *regs));
                    exec(env, body, regs).await;
                }
            }
            Stmt::Spawn { name, body } => {
                sim::spawn(name.clone(), run_block(env.clone(), body.clone(), *regs));
            }
            Stmt::Accept {
                id,
                ch,
                count,
                dst,
                name,
                handler,
            } => {
                let rx = &env.receivers[*ch];
                let mut i = 0;
                loop {
                    // The request is a temporary: it goes to the handler, not to the next
                    // iteration. A forever loop keeps no counter.
                    sim::checkpoint("accept", &(*id, i, *regs));
                    let req = match count {
                        Some(c) if i >= *c => break,
                        Some(_) => rx.recv().await,
                        None => rx.recv_idle().await,
                    };
                    let mut child = *regs;
                    child[*dst] = req;
                    sim::spawn(name.clone(), run_block(env.clone(), handler.clone(), child));
                    if count.is_some() {
                        i += 1;
                    }
                }
            }
        }
    })
}

/// A generated program as a model.
pub struct GenModel {
    pub program: Arc<Program>,
    /// Declare `state_visible` (DFS with visited states then identifies states by value).
    pub visible: bool,
}

impl Model for GenModel {
    fn start(&self) -> Rc<dyn Monitor> {
        self.program.start()
    }

    fn grain(&self) -> Grain {
        self.program.grain
    }

    fn reduction_safe(&self) -> bool {
        true
    }

    fn state_visible(&self) -> bool {
        self.visible
    }

    fn symmetric_members(&self) -> Vec<usize> {
        (0..self.program.members).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Printing.

fn write_inner(f: &mut fmt::Formatter<'_>, inner: &Option<Box<Stmt>>) -> fmt::Result {
    match inner {
        Some(s) => {
            f.write_str("; ")?;
            write_line(f, s)
        }
        None => Ok(()),
    }
}

/// A statement without a block, on one line.
fn write_line(f: &mut fmt::Formatter<'_>, s: &Stmt) -> fmt::Result {
    match s {
        Stmt::Yield => write!(f, "yield_point"),
        Stmt::YieldNow => write!(f, "yield_now"),
        Stmt::Spin {
            id,
            flag,
            want,
            dst,
        } => write!(
            f,
            "loop {{ checkpoint(L{id}, regs); r{dst} = {flag}; if r{dst} >= {want} {{ break }} yield_now }}"
        ),
        Stmt::Choose { n, dst } => write!(f, "r{dst} = choose({n})"),
        Stmt::Load { a, dst } => write!(f, "r{dst} = a{a}.load()"),
        Stmt::Store { a, val } => write!(f, "a{a}.store({val})"),
        Stmt::FetchAdd { a, dst } => write!(f, "r{dst} = a{a}.fetch_add(1); emit inc a{a}"),
        Stmt::RacyInc { a, dst, pause } => write!(
            f,
            "r{dst} = a{a}.load(); {}a{a}.store(r{dst} + 1); emit inc a{a}",
            if *pause { "yield_point; " } else { "" }
        ),
        Stmt::Cas {
            a,
            current,
            new,
            dst,
        } => write!(
            f,
            "r{dst} = a{a}.compare_exchange({current}, {new}).is_ok()"
        ),
        Stmt::Lock { m, dst, add, inner } => {
            write!(f, "{{ g = m{m}.lock(); r{dst} = *g")?;
            write_inner(f, inner)?;
            write!(f, "; *g += {add} }}")
        }
        Stmt::Read { rw, dst, inner } => {
            write!(f, "{{ g = rw{rw}.read(); r{dst} = *g")?;
            write_inner(f, inner)?;
            write!(f, " }}")
        }
        Stmt::Write { rw, add, inner } => {
            write!(f, "{{ g = rw{rw}.write()")?;
            write_inner(f, inner)?;
            write!(f, "; *g += {add} }}")
        }
        Stmt::Send { ch, val } => write!(f, "c{ch}.send({val})"),
        Stmt::TrySend { ch, val, dst } => write!(f, "r{dst} = c{ch}.try_send({val}).is_ok()"),
        Stmt::Recv { ch, dst } => write!(f, "r{dst} = c{ch}.recv()"),
        Stmt::Notify { n } => write!(f, "n{n}.notify_one()"),
        Stmt::Notified { n, idle } => {
            write!(f, "n{n}.notified{}()", if *idle { "_idle" } else { "" })
        }
        Stmt::Emit { tag, val } => write!(f, "emit tag{tag}={val}"),
        Stmt::Bad { val } => write!(f, "emit bad({val})"),
        Stmt::If { .. } | Stmt::Loop { .. } | Stmt::Spawn { .. } | Stmt::Accept { .. } => {
            write!(f, "<block>")
        }
    }
}

fn write_block(f: &mut fmt::Formatter<'_>, block: &[Stmt], indent: usize) -> fmt::Result {
    let pad = "    ".repeat(indent);
    for s in block {
        match s {
            Stmt::If { reg, eq, then } => {
                writeln!(f, "{pad}if r{reg} == {eq} {{")?;
                write_block(f, then, indent + 1)?;
                writeln!(f, "{pad}}}")?;
            }
            Stmt::Loop { id, iters, body } => {
                writeln!(
                    f,
                    "{pad}for i in 0..{iters} {{  // L{id}: checkpoint(i, r0..r{})",
                    REGS - 1
                )?;
                write_block(f, body, indent + 1)?;
                writeln!(f, "{pad}}}")?;
            }
            Stmt::Spawn { name, body } => {
                writeln!(f, "{pad}spawn {name} (captures r0..r{}) {{", REGS - 1)?;
                write_block(f, body, indent + 1)?;
                writeln!(f, "{pad}}}")?;
            }
            Stmt::Accept {
                id,
                ch,
                count,
                dst,
                name,
                handler,
            } => {
                match count {
                    Some(c) => writeln!(
                        f,
                        "{pad}for i in 0..{c} {{  // L{id}: checkpoint(i, regs); req = c{ch}.recv()"
                    )?,
                    None => writeln!(
                        f,
                        "{pad}loop {{  // L{id}: checkpoint(regs); req = c{ch}.recv_idle()"
                    )?,
                }
                writeln!(f, "{pad}    spawn {name} (captures regs, r{dst} = req) {{")?;
                write_block(f, handler, indent + 2)?;
                writeln!(f, "{pad}    }}")?;
                writeln!(f, "{pad}}}")?;
            }
            other => {
                f.write_str(&pad)?;
                write_line(f, other)?;
                writeln!(f)?;
            }
        }
    }
    Ok(())
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "program seed {} ({:?}), grain {}",
            self.seed,
            self.shape,
            self.grain.name()
        )?;
        let mut objects: Vec<String> = Vec::new();
        objects.extend(
            self.atomics
                .iter()
                .enumerate()
                .map(|(i, v)| format!("atomic a{i} = {v}")),
        );
        objects.extend((0..self.mutexes).map(|i| format!("mutex m{i} = 0")));
        objects.extend((0..self.rwlocks).map(|i| format!("rwlock rw{i} = 0")));
        objects.extend(
            self.channels
                .iter()
                .enumerate()
                .map(|(i, c)| format!("channel c{i} (capacity {c})")),
        );
        objects.extend((0..self.notifies).map(|i| format!("notify n{i}")));
        writeln!(f, "  objects: {}", objects.join(", "))?;
        let invs: Vec<String> = self.invariants.iter().map(Inv::name).collect();
        let how = if self.stop {
            ""
        } else {
            " (recorded only: no run ends at a violation)"
        };
        writeln!(f, "  invariants: {}{how}", invs.join(", "))?;
        if self.members > 0 {
            writeln!(f, "  symmetric members: the first {} tasks", self.members)?;
        }
        for (name, body) in &self.tasks {
            writeln!(f, "  task {name}:")?;
            write_block(f, body, 2)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Generating.

/// What the generator may use.
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    /// Spawns from tasks (random spawns, and the spawn-capture and accept-loop templates).
    pub spawns: bool,
    /// At most one task of a random program spawns (children then get the same task numbers
    /// in every schedule).
    pub single_spawner: bool,
    /// `choose` statements.
    pub choose: bool,
    /// Broken invariants end the run (`Program::stop`).
    pub stop: bool,
    /// At most this many scheduling points (estimated) in a program.
    pub max_points: usize,
    /// Fair yields: `yield_now` statements and spin-waits in random programs, and the
    /// spin-wait template. Off, every seed draws the program it always drew.
    pub spin: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            spawns: true,
            single_spawner: false,
            choose: true,
            stop: true,
            max_points: 11,
            spin: false,
        }
    }
}

/// The program for `seed`: the same every time.
pub fn generate(seed: u64, opts: &GenOptions) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Redraw (from the same stream) until the program is small enough.
    loop {
        let roll = rng.gen_range(0..100);
        let mut program = match roll {
            0..15 if opts.spawns => spawn_capture(&mut rng, seed, opts),
            15..30 if opts.spawns => accept_loop(&mut rng, seed, opts),
            75..100 if opts.spin => spin_wait(&mut rng, seed, opts),
            _ => random_program(&mut rng, seed, opts),
        };
        program.stop = opts.stop;
        if points(&program) <= opts.max_points {
            return program;
        }
    }
}

/// An estimate of the scheduling points of a run (each task's, loops unrolled).
pub fn points(p: &Program) -> usize {
    fn stmt(s: &Stmt, grain: Grain) -> usize {
        let atomic = usize::from(grain == Grain::Access);
        match s {
            Stmt::Emit { .. } | Stmt::Bad { .. } => 0,
            Stmt::Load { .. } | Stmt::Store { .. } | Stmt::FetchAdd { .. } | Stmt::Cas { .. } => {
                atomic
            }
            Stmt::RacyInc { pause, .. } => 2 * atomic + usize::from(*pause),
            Stmt::Lock { inner, .. } | Stmt::Read { inner, .. } | Stmt::Write { inner, .. } => {
                1 + inner.as_ref().map_or(0, |i| stmt(i, grain))
            }
            Stmt::If { then, .. } => block(then, grain),
            Stmt::Loop { iters, body, .. } => iters * block(body, grain),
            Stmt::Spawn { body, .. } => 1 + block(body, grain),
            Stmt::Accept { count, handler, .. } => count.unwrap_or(2) * (2 + block(handler, grain)),
            // A round: a read (an atomic's is a point at access grain only) and a yield. (How
            // many rounds fairness lets it go depends on the others' steps.)
            Stmt::Spin { flag, .. } => {
                let read = match flag {
                    Flag::Atomic(_) => atomic,
                    Flag::Mutex(_) | Flag::RwLock(_) => 1,
                };
                read + 1
            }
            _ => 1,
        }
    }
    fn block(b: &[Stmt], grain: Grain) -> usize {
        b.iter().map(|s| stmt(s, grain)).sum()
    }
    p.tasks
        .iter()
        .map(|(_, b)| 1 + block(b, p.grain))
        .sum::<usize>()
}

/// The generator's view of a program's objects while it draws statements.
struct Draw<'r> {
    rng: &'r mut ChaCha8Rng,
    atomics: usize,
    mutexes: usize,
    rwlocks: usize,
    channels: usize,
    notifies: usize,
    spawns: bool,
    single_spawner: bool,
    choose: bool,
    /// `yield_now` and spin-waits (`GenOptions::spin`).
    spin: bool,
    /// The first task that spawns.
    spawner: Option<usize>,
    next_loop: usize,
    next_child: usize,
    /// Statements some other task should run so that this one is not stuck for sure (a send
    /// for a recv, a notify for a notified), with the task that needs them and how many.
    owed: Vec<(usize, Stmt, usize)>,
    tags: BTreeSet<u8>,
    incs: BTreeSet<usize>,
    /// Registers the current task has written so far.
    written: BTreeSet<usize>,
}

impl Draw<'_> {
    fn reg(&mut self) -> usize {
        self.rng.gen_range(0..REGS)
    }

    /// A register the statement writes.
    fn dst(&mut self) -> usize {
        let r = self.reg();
        self.written.insert(r);
        r
    }

    /// A register to test: mostly one the task has written (registers start at 0, so testing
    /// another one decides nothing at run time).
    fn tested(&mut self) -> usize {
        let written: Vec<usize> = self.written.iter().copied().collect();
        if !written.is_empty() && self.rng.gen_bool(0.8) {
            written[self.rng.gen_range(0..written.len())]
        } else {
            self.reg()
        }
    }

    fn val(&mut self) -> Val {
        if self.rng.gen_bool(0.5) {
            Val::Reg(self.reg())
        } else {
            Val::Const(self.rng.gen_range(0..3))
        }
    }

    fn tag(&mut self) -> u8 {
        let t = self.rng.gen_range(1..=3);
        self.tags.insert(t);
        t
    }

    /// A statement that may sit inside a critical section of mutex `held` (or of a rwlock).
    /// Half the time, a statement inside a critical section (see `inner`).
    fn maybe_inner(&mut self, held: Option<usize>) -> Option<Box<Stmt>> {
        if self.rng.gen_bool(0.5) {
            self.inner(held)
        } else {
            None
        }
    }

    fn inner(&mut self, held: Option<usize>) -> Option<Box<Stmt>> {
        let s = match self.rng.gen_range(0..6) {
            0 | 1 => Stmt::Yield,
            2 => Stmt::Emit {
                tag: self.tag(),
                val: Val::Reg(self.reg()),
            },
            3 => Stmt::Store {
                a: self.rng.gen_range(0..self.atomics),
                val: self.val(),
            },
            // A nested lock of another mutex: lock-order deadlocks are possible.
            _ if self.mutexes > 1 => {
                let mut m = self.rng.gen_range(0..self.mutexes);
                if Some(m) == held {
                    m = (m + 1) % self.mutexes;
                }
                Stmt::Lock {
                    m,
                    dst: self.dst(),
                    add: 1,
                    inner: None,
                }
            }
            _ => return None,
        };
        Some(Box::new(s))
    }

    /// One statement of task `task`; `top` says whether blocks (if, loop, spawn) may open here,
    /// `mult` how many times it runs (inside a loop).
    fn stmt(&mut self, task: usize, top: bool, mult: usize, child: bool) -> Stmt {
        // Fair yields come first, from a draw of their own: without them, the draws below are
        // the ones they always were.
        if self.spin {
            match self.rng.gen_range(0..100) {
                0..8 => return Stmt::YieldNow,
                8..30 if top && !child => return self.spin_wait(task),
                _ => {}
            }
        }
        loop {
            let s = match self.rng.gen_range(0..100) {
                0..8 => Stmt::Yield,
                8..12 if self.choose => Stmt::Choose {
                    n: 2,
                    dst: self.dst(),
                },
                12..22 => Stmt::Load {
                    a: self.rng.gen_range(0..self.atomics),
                    dst: self.dst(),
                },
                22..28 => Stmt::Store {
                    a: self.rng.gen_range(0..self.atomics),
                    val: self.val(),
                },
                28..32 => {
                    let a = self.rng.gen_range(0..self.atomics);
                    self.incs.insert(a);
                    Stmt::FetchAdd { a, dst: self.dst() }
                }
                32..37 => {
                    let a = self.rng.gen_range(0..self.atomics);
                    self.incs.insert(a);
                    Stmt::RacyInc {
                        a,
                        dst: self.dst(),
                        pause: self.rng.gen_bool(0.5),
                    }
                }
                37..41 => Stmt::Cas {
                    a: self.rng.gen_range(0..self.atomics),
                    current: Val::Const(self.rng.gen_range(0..2)),
                    new: self.val(),
                    dst: self.dst(),
                },
                41..49 if self.mutexes > 0 => {
                    let m = self.rng.gen_range(0..self.mutexes);
                    let inner = self.maybe_inner(Some(m));
                    Stmt::Lock {
                        m,
                        dst: self.dst(),
                        add: self.rng.gen_range(0..3),
                        inner,
                    }
                }
                49..53 if self.rwlocks > 0 => {
                    let inner = self.maybe_inner(None);
                    Stmt::Read {
                        rw: self.rng.gen_range(0..self.rwlocks),
                        dst: self.dst(),
                        inner,
                    }
                }
                53..57 if self.rwlocks > 0 => {
                    let inner = self.maybe_inner(None);
                    Stmt::Write {
                        rw: self.rng.gen_range(0..self.rwlocks),
                        add: self.rng.gen_range(1..3),
                        inner,
                    }
                }
                57..62 if self.channels > 0 => {
                    let ch = self.rng.gen_range(0..self.channels);
                    if self.rng.gen_bool(0.6) {
                        let dst = self.reg();
                        self.owed.push((task, Stmt::Recv { ch, dst }, mult));
                    }
                    Stmt::Send {
                        ch,
                        val: self.val(),
                    }
                }
                62..65 if self.channels > 0 => Stmt::TrySend {
                    ch: self.rng.gen_range(0..self.channels),
                    val: self.val(),
                    dst: self.dst(),
                },
                65..70 if self.channels > 0 => {
                    let ch = self.rng.gen_range(0..self.channels);
                    let val = self.val();
                    self.owed.push((task, Stmt::Send { ch, val }, mult));
                    Stmt::Recv {
                        ch,
                        dst: self.dst(),
                    }
                }
                70..74 if self.notifies > 0 => Stmt::Notify {
                    n: self.rng.gen_range(0..self.notifies),
                },
                74..78 if self.notifies > 0 => {
                    let n = self.rng.gen_range(0..self.notifies);
                    let idle = self.rng.gen_bool(0.3);
                    if !idle {
                        self.owed.push((task, Stmt::Notify { n }, mult));
                    }
                    Stmt::Notified { n, idle }
                }
                78..86 => Stmt::Emit {
                    tag: self.tag(),
                    val: Val::Reg(self.reg()),
                },
                86..91 if top || child => {
                    let reg = self.tested();
                    let eq = self.rng.gen_range(0..2);
                    let then = if self.rng.gen_bool(0.5) {
                        vec![Stmt::Bad { val: Val::Reg(reg) }]
                    } else {
                        vec![self.stmt(task, false, mult, child)]
                    };
                    Stmt::If {
                        reg,
                        eq,
                        then: Arc::new(then),
                    }
                }
                91..95 if top && !child => {
                    let id = self.next_loop;
                    self.next_loop += 1;
                    let iters = 2;
                    let len = self.rng.gen_range(1..=2);
                    let body = (0..len)
                        .map(|_| self.stmt(task, false, mult * iters, child))
                        .collect();
                    Stmt::Loop {
                        id,
                        iters,
                        body: Arc::new(body),
                    }
                }
                95..100
                    if top
                        && !child
                        && self.spawns
                        && (!self.single_spawner || self.spawner.is_none_or(|t| t == task)) =>
                {
                    self.spawner = Some(task);
                    let name = format!("child{}", self.next_child);
                    self.next_child += 1;
                    self.child_body(task, name)
                }
                _ => continue,
            };
            return s;
        }
    }

    /// A spin-wait on a flag of this program's objects, and, most of the time, the statement
    /// that sets it owed by another task (see `pay_debts`; random stores and additions may set
    /// it too, or not: the reference search says which).
    fn spin_wait(&mut self, task: usize) -> Stmt {
        let want = 1;
        let (flag, set) = match self.rng.gen_range(0..4) {
            0 if self.mutexes > 0 => {
                let m = self.rng.gen_range(0..self.mutexes);
                let set = Stmt::Lock {
                    m,
                    dst: self.reg(),
                    add: want,
                    inner: None,
                };
                (Flag::Mutex(m), set)
            }
            1 if self.rwlocks > 0 => {
                let rw = self.rng.gen_range(0..self.rwlocks);
                let set = Stmt::Write {
                    rw,
                    add: want,
                    inner: None,
                };
                (Flag::RwLock(rw), set)
            }
            _ => {
                let a = self.rng.gen_range(0..self.atomics);
                let set = Stmt::Store {
                    a,
                    val: Val::Const(want),
                };
                (Flag::Atomic(a), set)
            }
        };
        if self.rng.gen_bool(0.85) {
            self.owed.push((task, set, 1));
        }
        let id = self.next_loop;
        self.next_loop += 1;
        Stmt::Spin {
            id,
            flag,
            want,
            dst: self.dst(),
        }
    }

    /// A spawn whose child waits or works a little, then uses a captured register.
    fn child_body(&mut self, task: usize, name: String) -> Stmt {
        let reg = self.tested();
        let mut body = vec![self.stmt(task, false, 1, true)];
        body.push(if self.rng.gen_bool(0.5) {
            Stmt::If {
                reg,
                eq: self.rng.gen_range(0..2),
                then: Arc::new(vec![Stmt::Bad { val: Val::Reg(reg) }]),
            }
        } else {
            Stmt::Emit {
                tag: self.tag(),
                val: Val::Reg(reg),
            }
        });
        Stmt::Spawn {
            name,
            body: Arc::new(body),
        }
    }

    /// Appends what tasks owe each other (most of it: a few stay unpaid, so that some programs
    /// can block), each to a random task other than the one that needs it.
    fn pay_debts(&mut self, tasks: &mut [(String, Vec<Stmt>)]) {
        let owed = std::mem::take(&mut self.owed);
        for (needy, stmt, times) in owed {
            if self.rng.gen_bool(0.12) || tasks.len() < 2 {
                continue;
            }
            let mut to = self.rng.gen_range(0..tasks.len() - 1);
            if to >= needy {
                to += 1;
            }
            for _ in 0..times {
                let body = &mut tasks[to].1;
                let at = self.rng.gen_range(0..=body.len());
                body.insert(at, stmt.clone());
            }
        }
    }

    fn invariants(&mut self) -> Vec<Inv> {
        let mut invs = vec![Inv::NoBad];
        let tags: Vec<u8> = self.tags.iter().copied().collect();
        let incs: Vec<usize> = self.incs.iter().copied().collect();
        let extra = self.rng.gen_range(1..=2);
        for _ in 0..extra {
            let inv = match self.rng.gen_range(0..5) {
                0 if !incs.is_empty() => Inv::Counts {
                    a: incs[self.rng.gen_range(0..incs.len())],
                },
                1 if tags.len() >= 2 => {
                    let first = tags[self.rng.gen_range(0..tags.len())];
                    let mut then = tags[self.rng.gen_range(0..tags.len())];
                    if then == first {
                        then = tags
                            [(tags.iter().position(|t| *t == first).unwrap_or(0) + 1) % tags.len()];
                    }
                    Inv::Never { first, then }
                }
                2 if !tags.is_empty() => Inv::SumAtMost {
                    tag: tags[self.rng.gen_range(0..tags.len())],
                    bound: self.rng.gen_range(0..4),
                },
                3 if !tags.is_empty() => Inv::Distinct {
                    tag: tags[self.rng.gen_range(0..tags.len())],
                },
                4 if !tags.is_empty() => Inv::Ascending {
                    tag: tags[self.rng.gen_range(0..tags.len())],
                },
                _ if !incs.is_empty() => Inv::Counts { a: incs[0] },
                _ => continue,
            };
            if !invs.contains(&inv) {
                invs.push(inv);
            }
        }
        invs
    }
}

fn grain(rng: &mut ChaCha8Rng) -> Grain {
    if rng.gen_bool(0.35) {
        Grain::Access
    } else {
        Grain::Await
    }
}

fn draw<'r>(
    rng: &'r mut ChaCha8Rng,
    atomics: usize,
    mutexes: usize,
    rwlocks: usize,
    channels: usize,
    notifies: usize,
    spawns: bool,
) -> Draw<'r> {
    Draw {
        rng,
        atomics,
        mutexes,
        rwlocks,
        channels,
        notifies,
        spawns,
        single_spawner: false,
        choose: true,
        spin: false,
        spawner: None,
        next_loop: 0,
        next_child: 0,
        owed: Vec::new(),
        tags: BTreeSet::new(),
        incs: BTreeSet::new(),
        written: BTreeSet::new(),
    }
}

fn finish(
    seed: u64,
    shape: Shape,
    grain: Grain,
    atomics: Vec<usize>,
    d: &mut Draw<'_>,
    mut tasks: Vec<(String, Vec<Stmt>)>,
    capacities: Vec<usize>,
) -> Program {
    d.pay_debts(&mut tasks);
    let invariants = d.invariants();
    Program {
        seed,
        shape,
        grain,
        atomics,
        mutexes: d.mutexes,
        rwlocks: d.rwlocks,
        channels: capacities,
        notifies: d.notifies,
        tasks: tasks.into_iter().map(|(n, b)| (n, Arc::new(b))).collect(),
        invariants,
        stop: true,
        livelocks: false,
        members: 0,
    }
}

fn random_program(rng: &mut ChaCha8Rng, seed: u64, opts: &GenOptions) -> Program {
    let grain = grain(rng);
    let atomics: Vec<usize> = (0..rng.gen_range(1..=2))
        .map(|_| rng.gen_range(0..2))
        .collect();
    let mutexes = rng.gen_range(0..=2);
    let rwlocks = rng.gen_range(0..=1);
    let capacities: Vec<usize> = (0..rng.gen_range(0..=1))
        .map(|_| rng.gen_range(1..=2))
        .collect();
    let notifies = rng.gen_range(0..=1);
    let n_tasks = rng.gen_range(2..=4);
    let mut d = draw(
        rng,
        atomics.len(),
        mutexes,
        rwlocks,
        capacities.len(),
        notifies,
        opts.spawns,
    );
    d.single_spawner = opts.single_spawner;
    d.choose = opts.choose;
    d.spin = opts.spin;
    let mut tasks = Vec::new();
    for t in 0..n_tasks {
        let len = d.rng.gen_range(1..=if n_tasks >= 4 { 2 } else { 3 });
        d.written.clear();
        let body = (0..len).map(|_| d.stmt(t, true, 1, false)).collect();
        tasks.push((format!("t{t}"), body));
    }
    finish(
        seed,
        Shape::Random,
        grain,
        atomics,
        &mut d,
        tasks,
        capacities,
    )
}

/// setter: `yield_point; a0.store(1); n0.notify_one()`; parent: `r0 = a0.load(); spawn child {
/// n0.notified(); if r0 == 0 { emit bad } }` — with variations and a little noise.
fn spawn_capture(rng: &mut ChaCha8Rng, seed: u64, opts: &GenOptions) -> Program {
    let grain = grain(rng);
    let atomics = vec![0];
    let mut d = draw(rng, 1, 1, 0, 0, 1, true);
    d.choose = opts.choose;
    let setter = vec![
        Stmt::Yield,
        Stmt::Store {
            a: 0,
            val: Val::Const(1),
        },
        Stmt::Notify { n: 0 },
    ];
    let use_capture = if d.rng.gen_bool(0.6) {
        Stmt::If {
            reg: 0,
            eq: 0,
            then: Arc::new(vec![Stmt::Bad { val: Val::Reg(0) }]),
        }
    } else {
        Stmt::Emit {
            tag: d.tag(),
            val: Val::Reg(0),
        }
    };
    let child = vec![Stmt::Notified { n: 0, idle: false }, use_capture];
    let mut parent = vec![
        Stmt::Load { a: 0, dst: 0 },
        Stmt::Spawn {
            name: "child".into(),
            body: Arc::new(child),
        },
    ];
    // Noise: an extra statement in the parent after the spawn, or a third task.
    match d.rng.gen_range(0..4) {
        0 => parent.push(d.stmt(1, false, 1, false)),
        1 => {
            let s = d.stmt(2, false, 1, false);
            let tasks = vec![
                ("setter".to_string(), setter),
                ("parent".to_string(), parent),
                ("other".to_string(), vec![s]),
            ];
            return finish(
                seed,
                Shape::SpawnCapture,
                grain,
                atomics,
                &mut d,
                tasks,
                Vec::new(),
            );
        }
        _ => {}
    }
    let mut tasks = vec![
        ("setter".to_string(), setter),
        ("parent".to_string(), parent),
    ];
    if d.rng.gen_bool(0.5) {
        tasks.swap(0, 1);
    }
    finish(
        seed,
        Shape::SpawnCapture,
        grain,
        atomics,
        &mut d,
        tasks,
        Vec::new(),
    )
}

/// A server accepts requests from a channel and spawns a handler per request; one or two
/// clients send requests (constants, or values they loaded).
fn accept_loop(rng: &mut ChaCha8Rng, seed: u64, opts: &GenOptions) -> Program {
    let grain = grain(rng);
    let atomics = vec![0];
    let cap = rng.gen_range(1..=2);
    let clients = rng.gen_range(1..=2);
    let forever = rng.gen_bool(0.4);
    let mut d = draw(rng, 1, 1, 0, 1, 0, true);
    d.choose = opts.choose;
    let mut tasks = Vec::new();
    let mut requests = 0;
    for c in 0..clients {
        let mut body = Vec::new();
        if d.rng.gen_bool(0.4) {
            // A request carrying a value read from shared state.
            d.incs.insert(0);
            body.push(Stmt::FetchAdd { a: 0, dst: 0 });
            body.push(Stmt::Send {
                ch: 0,
                val: Val::Reg(0),
            });
            requests += 1;
        } else {
            let n = d.rng.gen_range(1..=2);
            for k in 0..n {
                if d.rng.gen_bool(0.3) {
                    body.push(Stmt::Yield);
                }
                body.push(Stmt::Send {
                    ch: 0,
                    val: Val::Const(c * 2 + k + 1),
                });
                requests += 1;
            }
        }
        tasks.push((format!("client{c}"), body));
    }
    let tag = d.tag();
    let mut handler = Vec::new();
    // A handler never touches the server's channel: feeding it would never end.
    d.channels = 0;
    if d.rng.gen_bool(0.5) {
        handler.push(d.stmt(clients, false, 1, true));
    }
    handler.push(match d.rng.gen_range(0..3) {
        0 => Stmt::If {
            reg: 1,
            eq: d.rng.gen_range(0..3),
            then: Arc::new(vec![Stmt::Bad { val: Val::Reg(1) }]),
        },
        _ => Stmt::Emit {
            tag,
            val: Val::Reg(1),
        },
    });
    let server = vec![Stmt::Accept {
        id: 0,
        ch: 0,
        count: (!forever).then_some(requests),
        dst: 1,
        name: "handler".into(),
        handler: Arc::new(handler),
    }];
    tasks.insert(d.rng.gen_range(0..=tasks.len()), ("server".into(), server));
    let mut program = finish(
        seed,
        Shape::AcceptLoop,
        grain,
        atomics,
        &mut d,
        tasks,
        vec![cap],
    );
    // Handlers finish in any order: make the order of their events an invariant now and then.
    if !program.invariants.contains(&Inv::Ascending { tag }) && program.seed.is_multiple_of(2) {
        program.invariants.push(Inv::Ascending { tag });
    }
    program
}

/// The step bound for a program: small where it yields fairly, so that a livelock (a fair run
/// past the bound) is cheap to reach; the engine's default otherwise.
pub const SPIN_MAX_STEPS: usize = 200;

impl Program {
    /// Whether some task yields fairly (`yield_now`, spin-waits).
    pub fn yields(&self) -> bool {
        fn block(b: &[Stmt]) -> bool {
            b.iter().any(|s| match s {
                Stmt::YieldNow | Stmt::Spin { .. } => true,
                Stmt::If { then: b, .. }
                | Stmt::Loop { body: b, .. }
                | Stmt::Spawn { body: b, .. }
                | Stmt::Accept { handler: b, .. } => block(b),
                _ => false,
            })
        }
        self.tasks.iter().any(|(_, b)| block(b))
    }

    /// The step bound to explore it with (`None`: the engine's default).
    pub fn max_steps(&self) -> Option<usize> {
        self.yields().then_some(SPIN_MAX_STEPS)
    }
}

/// Spin-waits on flags (issue 18's shapes): a producer sets data and a flag (in either order:
/// the flag first is a bug a consumer can see), a consumer spins on the flag and checks the
/// data; or the consumer spins on a flag nobody sets; or two tasks each spin on a flag only the
/// other sets after its own wait (both livelocks, in every schedule), or before it (no
/// livelock). Flags and data are atomics or mutexes; a little noise now and then.
fn spin_wait(rng: &mut ChaCha8Rng, seed: u64, opts: &GenOptions) -> Program {
    let grain = grain(rng);
    let atomics = vec![0, 0];
    let mut d = draw(rng, 2, 2, 0, 0, 0, false);
    d.choose = opts.choose;
    // Object k (0 or 1) as a flag or data: atomic a<k> or mutex m<k>.
    let object = |d: &mut Draw<'_>, k: usize| -> (Flag, Stmt) {
        if d.rng.gen_bool(0.5) {
            let set = Stmt::Store {
                a: k,
                val: Val::Const(1),
            };
            (Flag::Atomic(k), set)
        } else {
            let set = Stmt::Lock {
                m: k,
                dst: 2,
                add: 1,
                inner: None,
            };
            (Flag::Mutex(k), set)
        }
    };
    let spin = |id: usize, flag: Flag, dst: usize| Stmt::Spin {
        id,
        flag,
        want: 1,
        dst,
    };
    let mut livelocks = false;
    let mut tasks = match d.rng.gen_range(0..6) {
        // Producer and consumer.
        0..=2 => {
            let (flag, set_flag) = object(&mut d, 0);
            let (data, write_data) = object(&mut d, 1);
            let read_data = match data {
                Flag::Atomic(a) => Stmt::Load { a, dst: 0 },
                _ => Stmt::Lock {
                    m: 1,
                    dst: 0,
                    add: 0,
                    inner: None,
                },
            };
            let mut producer = vec![write_data, set_flag];
            if d.rng.gen_bool(0.4) {
                producer.swap(0, 1);
            }
            let check = if d.rng.gen_bool(0.6) {
                Stmt::If {
                    reg: 0,
                    eq: 0,
                    then: Arc::new(vec![Stmt::Bad { val: Val::Reg(0) }]),
                }
            } else {
                Stmt::Emit {
                    tag: d.tag(),
                    val: Val::Reg(0),
                }
            };
            let consumer = vec![spin(0, flag, 1), read_data, check];
            let mut tasks = vec![("producer".to_string(), producer)];
            tasks.push(("consumer".to_string(), consumer.clone()));
            if d.rng.gen_bool(0.3) {
                tasks.push(("consumer2".to_string(), consumer));
            }
            tasks
        }
        // A flag nobody sets: the producer writes the data only.
        3 => {
            livelocks = true;
            let (flag, _) = object(&mut d, 0);
            let (_, write_data) = object(&mut d, 1);
            vec![
                ("producer".to_string(), vec![write_data, Stmt::YieldNow]),
                ("consumer".to_string(), vec![spin(0, flag, 1)]),
            ]
        }
        // Two tasks wait for each other: each sets the other's flag after its own wait (a
        // livelock), or one of them before (a handshake).
        _ => {
            let (fa, set_a) = object(&mut d, 0);
            let (fb, set_b) = object(&mut d, 1);
            let mut left = vec![spin(0, fa, 1), set_b];
            let right = vec![spin(1, fb, 1), set_a];
            if d.rng.gen_bool(0.5) {
                left.swap(0, 1);
            } else {
                livelocks = true;
            }
            vec![("left".to_string(), left), ("right".to_string(), right)]
        }
    };
    // Noise: a task that works a little (no spin-waits, no blocks), unless the program is built
    // to livelock (noise could end its runs some other way first).
    if !livelocks && d.rng.gen_bool(0.3) {
        let n = tasks.len();
        let s = d.stmt(n, false, 1, false);
        tasks.push(("other".to_string(), vec![s]));
    }
    let mut program = finish(
        seed,
        Shape::SpinWait,
        grain,
        atomics,
        &mut d,
        tasks,
        Vec::new(),
    );
    program.livelocks = livelocks;
    program
}
