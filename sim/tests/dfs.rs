//! Exhaustive search: DFS finds every violation, and sleep sets + source-set DPOR explore fewer schedules
//! yet reach the same violations and the same end states as plain DFS (soundness).

use std::collections::BTreeSet;
use std::fmt;
use std::rc::Rc;
use std::sync::OnceLock;

use sim::explore::{Explorer, Summary};
use sim::invariant::Invariant;
use sim::strategy::{Reduction, StrategyKind};
use sim::sync::{channel, Atomic, Mutex, Notify, Shared};
use sim::{choose, yield_point, History, Model, Monitor};

#[derive(Hash)]
struct Ev(String);

impl fmt::Display for Ev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Fails at quiescence when the shared counter lost an update.
struct Total(Rc<Shared<u32>>, u32);

impl Invariant<Ev> for Total {
    fn name(&self) -> &str {
        "no-lost-update"
    }
    fn observe(&mut self, _: &Ev) -> Result<(), String> {
        Ok(())
    }
    fn at_quiescence(&mut self) -> Result<(), String> {
        let got = self.0.with(|v| *v);
        (got == self.1)
            .then_some(())
            .ok_or_else(|| format!("total {got}, expected {}", self.1))
    }
}

/// Producers increment a counter (racily unless `locked`) and send their id to a consumer over
/// a bounded channel; one producer makes a data choice; with `tally`, an atomic also counts
/// sends and the consumer notifies a waiter after each receipt.
struct Pipeline {
    producers: usize,
    locked: bool,
    tally: bool,
}

impl Pipeline {
    /// The pipeline the suite compares searches on: two producers, no tally. Its plain DFS takes
    /// seconds; with the tally it takes minutes (`full_pipeline` below, run with `--ignored`).
    fn of_two(locked: bool) -> Pipeline {
        Pipeline {
            producers: 2,
            locked,
            tally: false,
        }
    }
}

impl Model for Pipeline {
    fn reduction_safe(&self) -> bool {
        true
    }

    fn start(&self) -> Rc<dyn Monitor> {
        let total = Rc::new(Shared::new("total", 0u32));
        let history = History::new(vec![Box::new(Total(total.clone(), self.producers as u32))]);
        let lock = Rc::new(Mutex::new("lock", ()));
        let sent = Rc::new(Atomic::new("sent", 0usize));
        let done = Rc::new(Notify::new("done"));
        let (tx, rx) = channel::<usize>("inbox", 1);
        for p in 0..self.producers {
            let (total, lock, sent, tx, history) = (
                total.clone(),
                lock.clone(),
                sent.clone(),
                tx.clone(),
                history.clone(),
            );
            let (locked, tally) = (self.locked, self.tally);
            sim::spawn(format!("producer:{p}"), async move {
                let guard = if locked {
                    Some(lock.lock().await)
                } else {
                    None
                };
                let v = total.with(|v| *v);
                yield_point("db.write").await;
                total.with_mut(|t| *t = v + 1);
                drop(guard);
                if p == 0 && choose(2).await == 1 {
                    history.emit(Ev("producer 0 took the slow path".into()));
                    yield_point("slow").await;
                }
                tx.send(p).await;
                if tally {
                    sent.fetch_add(1).await;
                }
            });
        }
        let (producers, tally) = (self.producers, self.tally);
        {
            let (done, history) = (done.clone(), history.clone());
            sim::spawn("consumer", async move {
                for _ in 0..producers {
                    let p = rx.recv().await;
                    history.emit(Ev(format!("got {p}")));
                    if tally {
                        done.notify_one().await;
                    }
                }
            });
        }
        if self.tally {
            sim::spawn("waiter", async move {
                done.notified().await;
            });
        }
        history.monitor()
    }
}

/// A server polls two flags and parks on a notify between polls; two clients each set their
/// flag and notify. Which notify wakes the server, and whether a poll comes before or after a
/// flag is set, change how many times it polls and what it sees: a reduction that assumed the
/// notify it parked on was the only one that could wake it would miss some of these.
struct Wakeups;

impl Model for Wakeups {
    fn reduction_safe(&self) -> bool {
        true
    }

    /// Written for await grain (its flags' accesses not scheduling points): its tree then
    /// splits into enough subtrees for every shard of three to have one.
    fn grain(&self) -> sim::Grain {
        sim::Grain::Await
    }

    fn start(&self) -> Rc<dyn Monitor> {
        let history = History::new(Vec::new());
        let flags = Rc::new([Atomic::new("flag.a", false), Atomic::new("flag.b", false)]);
        let wake = Rc::new(Notify::new("wake"));
        for (client, name) in ["a", "b"].into_iter().enumerate() {
            let (flags, wake) = (flags.clone(), wake.clone());
            sim::spawn(format!("client:{name}"), async move {
                flags[client].store(true).await;
                wake.notify_one().await;
            });
        }
        let h = history.clone();
        sim::spawn("server", async move {
            loop {
                // Nothing lives across iterations: each poll starts afresh.
                sim::checkpoint("poll", &());
                let a = flags[0].load().await;
                let b = flags[1].load().await;
                h.emit(Ev(format!("polled a={a} b={b}")));
                if a && b {
                    break;
                }
                wake.notified().await;
            }
        });
        history.monitor()
    }
}

/// A model whose state DFS identifies by value (`Model::state_visible`): the test models keep
/// everything tasks share in engine objects, and name their loops' locals.
struct ByValue<'a>(&'a dyn Model);

impl Model for ByValue<'_> {
    fn start(&self) -> Rc<dyn Monitor> {
        self.0.start()
    }

    fn reduction_safe(&self) -> bool {
        true
    }

    fn state_visible(&self) -> bool {
        true
    }
}

fn dfs(model: &dyn Model, reduction: Reduction) -> Summary {
    dfs_bounded(model, None, reduction)
}

fn dfs_bounded(
    model: &dyn Model,
    preemption_bound: Option<usize>,
    reduction: Reduction,
) -> Summary {
    let s = Explorer::new(model)
        .experimental_partial_order(true)
        .strategy(StrategyKind::Dfs {
            preemption_bound,
            reduction,
        })
        .run()
        .expect("explores");
    assert!(s.finished(), "the space is small enough to exhaust");
    s
}

/// Plain unbounded DFS of the two-producer pipeline: the slowest baseline, computed once for
/// every test that compares against it.
fn plain_pipeline(locked: bool) -> &'static Summary {
    static PLAIN: [OnceLock<Summary>; 2] = [OnceLock::new(), OnceLock::new()];
    PLAIN[usize::from(locked)].get_or_init(|| dfs(&Pipeline::of_two(locked), Reduction::None))
}

fn violations(s: &Summary) -> BTreeSet<String> {
    s.violations.iter().map(|f| f.invariant.clone()).collect()
}

#[test]
fn reduction_is_sound_and_smaller_on_a_pipeline() {
    for (producers, locked) in [(2, false), (2, true)] {
        let model = Pipeline::of_two(locked);
        let plain = plain_pipeline(locked);
        let reduced = dfs(&model, Reduction::PartialOrder);
        eprintln!(
            "locked={locked}: plain {} runs, reduced {}",
            plain.runs, reduced.runs
        );
        assert_eq!(
            violations(plain),
            violations(&reduced),
            "p={producers} locked={locked}"
        );
        assert_eq!(
            plain.end_states, reduced.end_states,
            "p={producers} locked={locked}"
        );
        assert!(
            reduced.runs < plain.runs,
            "p={producers} locked={locked}: {} reduced vs {} plain",
            reduced.runs,
            plain.runs
        );
        if locked {
            assert!(violations(plain).is_empty());
        } else {
            assert!(violations(plain).contains("no-lost-update"));
        }
    }
}

#[test]
fn reduction_finds_every_wakeup_order() {
    for bound in [None, Some(0), Some(1), Some(2)] {
        let plain = dfs_bounded(&Wakeups, bound, Reduction::None);
        let reduced = dfs_bounded(&Wakeups, bound, Reduction::PartialOrder);
        assert_eq!(plain.end_states, reduced.end_states, "bound {bound:?}");
        assert!(reduced.runs <= plain.runs, "bound {bound:?}");
    }
}

#[test]
fn bounded_reduction_is_sound_on_a_pipeline() {
    for bound in 0..=2 {
        for locked in [false, true] {
            let model = Pipeline::of_two(locked);
            let plain = dfs_bounded(&model, Some(bound), Reduction::None);
            let reduced = dfs_bounded(&model, Some(bound), Reduction::PartialOrder);
            let what = format!("bound {bound} locked={locked}");
            assert_eq!(violations(&plain), violations(&reduced), "{what}");
            assert_eq!(plain.end_states, reduced.end_states, "{what}");
            assert!(reduced.runs <= plain.runs, "{what}");
        }
    }
}

/// A model that does not declare its shared state safe is explored without reduction.
struct Opaque;

impl Model for Opaque {
    fn start(&self) -> Rc<dyn Monitor> {
        Pipeline::of_two(false).start()
    }
}

#[test]
fn reduction_is_off_for_models_that_do_not_declare_their_shared_state() {
    for reduction in [Reduction::PartialOrder, Reduction::VisitedStates] {
        // What the search was set to is all this checks: a few hundred runs show it.
        let s = Explorer::new(&Opaque)
            .experimental_partial_order(true)
            .strategy(StrategyKind::Dfs {
                preemption_bound: None,
                reduction,
            })
            .runs(300)
            .run()
            .expect("explores");
        assert_eq!(s.runs, 300);
        assert_eq!(
            s.strategy,
            StrategyKind::Dfs {
                preemption_bound: None,
                reduction: Reduction::None
            }
        );
        assert_eq!(s.pruned, 0);
    }
}

fn dfs_split(
    model: &dyn Model,
    bound: Option<usize>,
    reduction: Reduction,
    (shard, shards): (u64, u64),
    jobs: usize,
) -> Summary {
    Explorer::new(model)
        .experimental_partial_order(true)
        .strategy(StrategyKind::Dfs {
            preemption_bound: bound,
            reduction,
        })
        .first_run(shard)
        .stride(shards)
        .jobs(jobs)
        .run()
        .expect("explores")
}

/// Shards and parallel jobs split one search into subtrees: merged, they cover what the
/// unsplit search covers (same violations, same end states, exhaustive), and a shard explores
/// the same schedules every time.
#[test]
fn split_searches_merge_to_the_unsplit_result() {
    let pipeline = Pipeline::of_two(false);
    let models: [(&str, &dyn Model); 2] = [("pipeline", &pipeline), ("wakeups", &Wakeups)];
    for (name, model) in models {
        for (bound, reduction) in [
            (None, Reduction::PartialOrder),
            (Some(1), Reduction::PartialOrder),
            (None, Reduction::VisitedStates),
            (Some(1), Reduction::VisitedStates),
        ] {
            let what = format!("{name} bound {bound:?} {reduction:?}");
            let whole = dfs_bounded(model, bound, reduction);
            for shards in [2, 3] {
                let parts: Vec<Summary> = (0..shards)
                    .map(|i| dfs_split(model, bound, reduction, (i, shards), 1))
                    .collect();
                assert!(
                    parts.iter().all(|p| p.runs > 0),
                    "{what}: every shard has work"
                );
                let again = dfs_split(model, bound, reduction, (0, shards), 1);
                assert_eq!(
                    again.schedules, parts[0].schedules,
                    "{what}: shards are deterministic"
                );
                let merged = Summary::merge(parts).unwrap();
                assert!(merged.finished(), "{what}");
                assert_eq!(violations(&merged), violations(&whole), "{what}");
                assert_eq!(merged.end_states, whole.end_states, "{what}");
            }
            let parallel = dfs_split(model, bound, reduction, (0, 1), 2);
            assert!(parallel.finished(), "{what}");
            assert_eq!(violations(&parallel), violations(&whole), "{what}");
            assert_eq!(parallel.end_states, whole.end_states, "{what}");
        }
    }
}

/// Visited-state caching, with states identified by trace or by value, reaches every end state
/// and violation plain DFS reaches, with and without a preemption bound, in fewer schedules.
#[test]
fn visited_states_are_sound_and_smaller() {
    let models: [(&str, &dyn Model); 3] = [
        ("pipeline", &Pipeline::of_two(false)),
        ("locked pipeline", &Pipeline::of_two(true)),
        ("wakeups", &Wakeups),
    ];
    for (name, model) in models {
        for bound in [None, Some(0), Some(1), Some(2)] {
            let what = format!("{name} bound {bound:?}");
            let plain = match (name, bound) {
                ("pipeline", None) => plain_pipeline(false).clone(),
                ("locked pipeline", None) => plain_pipeline(true).clone(),
                _ => dfs_bounded(model, bound, Reduction::None),
            };
            for (how, model) in [("trace", model), ("value", &ByValue(model) as &dyn Model)] {
                let what = format!("{what}, states by {how}");
                let cached = dfs_bounded(model, bound, Reduction::VisitedStates);
                assert_eq!(violations(&plain), violations(&cached), "{what}");
                assert_eq!(plain.end_states, cached.end_states, "{what}");
                assert!(cached.runs <= plain.runs, "{what}");
                if bound.is_none() {
                    assert!(
                        cached.runs < plain.runs,
                        "{what}: {} vs {}",
                        cached.runs,
                        plain.runs
                    );
                }
            }
        }
    }
}

/// The suite's comparisons on the pipeline with its tally (a send counter and a waiter): the
/// same violations and end states by plain DFS, by DPOR and by visited states, at a size whose
/// plain search takes minutes. `cargo test -p sim --test dfs -- --ignored`.
#[test]
#[ignore = "minutes: the plain search of the full pipeline"]
fn full_pipeline() {
    for locked in [false, true] {
        let model = Pipeline {
            producers: 2,
            locked,
            tally: true,
        };
        let plain = dfs(&model, Reduction::None);
        for reduction in [Reduction::PartialOrder, Reduction::VisitedStates] {
            let reduced = dfs(&model, reduction);
            let what = format!("locked={locked} {reduction:?}");
            eprintln!("{what}: {} runs, plain {}", reduced.runs, plain.runs);
            assert_eq!(violations(&plain), violations(&reduced), "{what}");
            assert_eq!(plain.end_states, reduced.end_states, "{what}");
            assert!(reduced.runs < plain.runs, "{what}");
        }
    }
}
