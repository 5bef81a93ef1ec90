//! The names a run hands out: each task's unique name (its identity in replay files), and the
//! numbers of unnamed objects (`mutex#3`). Runs of one test spawn the same tasks and create the
//! same objects, so each name is made once per thread and shared by the runs after (a spawn
//! made two or three strings a run before; what a run does never depends on it).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::rt::task::Task;

/// Task names kept across runs before the table is emptied (a test that names its tasks anew
/// in every run would otherwise grow it without bound).
const KEPT: usize = 4096;

#[derive(Default)]
pub(crate) struct Names {
    /// Task names taken this run, kept as a set once the run has many tasks (below that a
    /// scan is cheaper than the set).
    taken: Option<HashSet<Arc<str>>>,
}

/// The names made on this thread, kept from run to run.
#[derive(Default)]
struct Made {
    /// Per task name given, its namesakes' names.
    tasks: HashMap<Box<str>, Namesakes>,
    /// Per task name, its wake-up object's (`Execution::block_current`).
    wake_ups: HashMap<Box<str>, Arc<str>>,
    /// Per kind of object (a run has a few: a list), `[kind#1, kind#2, ...]` and the last
    /// number given in the run `run`; per part of one, `[kind#1 part, ...]`.
    objects: Vec<(Part, Namesakes)>,
}

/// A kind of object and a part's suffix (`""`: the object itself).
type Part = (&'static str, &'static str);

thread_local! {
    static MADE: RefCell<Made> = RefCell::new(Made::default());
}

/// A task name and its namesakes, `[name, name#2, name#3, ...]` (or an object kind's
/// numbered names), and the last suffix given in the run `run`.
#[derive(Default)]
struct Namesakes {
    names: Vec<Arc<str>>,
    last: usize,
    run: u64,
}

impl Names {
    /// `name`, or, if a task of `tasks` has it, the first free `name#n`. A set of the names
    /// taken and, per name, the last suffix handed out keep a spawn O(1) however many tasks a
    /// run has (lookups only: no iteration order reaches the run).
    pub(crate) fn unique(&mut self, name: &str, tasks: &[Task]) -> Arc<str> {
        let run = crate::rt::run_id();
        let unique = MADE.with(|made| {
            let mut made = made.borrow_mut();
            if made.tasks.len() + made.wake_ups.len() > KEPT {
                made.tasks.clear();
                made.wake_ups.clear();
            }
            let namesakes = match made.tasks.get_mut(name) {
                Some(n) => n,
                None => made.tasks.entry(name.into()).or_default(),
            };
            let suffixed = |k: usize| match k {
                1 => name.into(),
                k => format!("{name}#{k}").into(),
            };
            let mut n = 1;
            if is_taken(&mut self.taken, name, tasks) {
                n = namesakes.last_in(run).max(1);
                loop {
                    n += 1;
                    if !is_taken(&mut self.taken, namesakes.nth(n, suffixed), tasks) {
                        break;
                    }
                }
                namesakes.gave(n, run);
            }
            namesakes.nth(n, suffixed).clone()
        });
        if let Some(names) = &mut self.taken {
            names.insert(unique.clone());
        }
        unique
    }

    /// The name of `task`'s wake-up object (what it waits on while blocked on its waker).
    pub(crate) fn wake_up(task: &str) -> crate::Name {
        MADE.with(|made| {
            let wake_ups = &mut made.borrow_mut().wake_ups;
            match wake_ups.get(task) {
                Some(name) => name.clone(),
                None => {
                    let name: Arc<str> = format!("{task}'s wake-up").into();
                    wake_ups.insert(task.into(), name.clone());
                    name
                }
            }
            .into()
        })
    }

    /// Names for an unnamed object of this kind and its parts: the object's `mutex#1`,
    /// `mutex#2`, ... (numbered per run, in creation order), each followed by a part's suffix
    /// (`""` for the object itself, `" senders"` for a part).
    pub(crate) fn auto_names<const K: usize>(
        kind: &'static str,
        suffixes: [&'static str; K],
    ) -> [crate::Name; K] {
        let run = crate::rt::run_id();
        MADE.with(|made| {
            let objects = &mut made.borrow_mut().objects;
            let counter = numbered(objects, kind, "");
            let n = counter.last_in(run) + 1;
            counter.gave(n, run);
            suffixes.map(|suffix| {
                let numbered = numbered(objects, kind, suffix);
                let name = |k: usize| format!("{kind}#{k}{suffix}").into();
                numbered.nth(n, name).clone().into()
            })
        })
    }
}

/// The names made for a kind of object (or one of its parts, by suffix).
fn numbered<'a>(
    objects: &'a mut Vec<(Part, Namesakes)>,
    kind: &'static str,
    suffix: &'static str,
) -> &'a mut Namesakes {
    // The same literal is at one address: compared by address first, the strings only when
    // they differ (a `memcmp` a name, on a path every object's creation takes).
    let same = |a: &'static str, b: &'static str| std::ptr::eq(a, b) || a == b;
    match objects
        .iter()
        .position(|((k, s), _)| same(k, kind) && same(s, suffix))
    {
        Some(i) => &mut objects[i].1,
        None => {
            objects.push(((kind, suffix), Namesakes::default()));
            &mut objects.last_mut().expect("just pushed").1
        }
    }
}

impl Namesakes {
    /// The `n`-th name (from 1), made by `make` the first time it is asked for.
    fn nth(&mut self, n: usize, make: impl Fn(usize) -> Arc<str>) -> &Arc<str> {
        while self.names.len() < n {
            self.names.push(make(self.names.len() + 1));
        }
        &self.names[n - 1]
    }

    /// The last suffix or number given in the run `run` (0: none yet).
    fn last_in(&self, run: u64) -> usize {
        match self.run == run {
            true => self.last,
            false => 0,
        }
    }

    /// `n` is the last given in the run `run`.
    fn gave(&mut self, n: usize, run: u64) {
        (self.last, self.run) = (n, run);
    }
}

/// Whether a task already has this name (`taken`, the set, is made once a run has many).
fn is_taken(taken: &mut Option<HashSet<Arc<str>>>, name: &str, tasks: &[Task]) -> bool {
    const SCAN: usize = 32;
    if taken.is_none() && tasks.len() > SCAN {
        *taken = Some(tasks.iter().map(|t| t.name.clone()).collect());
    }
    match taken {
        Some(names) => names.contains(name),
        None => tasks.iter().any(|t| *t.name == *name),
    }
}

/// A task's name without the `#n` that `Names::unique` appends to a namesake's.
pub(crate) fn base_name(name: &str) -> &str {
    match name.rsplit_once('#') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}
