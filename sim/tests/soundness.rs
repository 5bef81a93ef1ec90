//! Reductions must reach what plain DFS reaches. Each test here is the smallest program found by
//! the differential test (`generated.rs`) for one way a reduction misses schedules, and asserts
//! that the reduction agrees with plain DFS on violations and end states, unbounded and under
//! preemption bounds 1 and 2. On the engine as it is, each of them fails.

use std::collections::BTreeSet;
use std::fmt;
use std::rc::Rc;

use sim::explore::{Explorer, Summary};
use sim::invariant::Invariant;
use sim::strategy::{Reduction, StrategyKind};
use sim::sync::{Atomic, Notify};
use sim::{History, Model, Monitor};

#[derive(Hash)]
struct Ev(&'static str);

impl fmt::Display for Ev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Fails on the event `forbidden`.
struct Never(&'static str);

impl Invariant<Ev> for Never {
    fn name(&self) -> &str {
        self.0
    }

    fn observe(&mut self, event: &Ev) -> Result<(), String> {
        if event.0 == self.0 {
            Err(format!("{} happened", self.0))
        } else {
            Ok(())
        }
    }
}

fn dfs(model: &dyn Model, bound: Option<usize>, reduction: Reduction) -> Summary {
    Explorer::new(model)
        .experimental_partial_order(true)
        .strategy(StrategyKind::Dfs {
            preemption_bound: bound,
            reduction,
        })
        .runs(100_000)
        .run()
        .expect("explores")
}

fn violations(s: &Summary) -> BTreeSet<String> {
    s.violations.iter().map(|f| f.invariant.clone()).collect()
}

/// Explores `model` with plain DFS and with `reduction` under each bound: where they disagree.
fn disagreements(model: &dyn Model, reduction: Reduction) -> Vec<String> {
    let mut disagree = Vec::new();
    for bound in [None, Some(1), Some(2)] {
        let plain = dfs(model, bound, Reduction::None);
        let reduced = dfs(model, bound, reduction);
        assert!(plain.finished() && reduced.finished());
        if violations(&plain) != violations(&reduced) {
            disagree.push(format!(
                "bound {bound:?}: violations: plain DFS {:?}, {} {:?}",
                violations(&plain),
                reduction.name(),
                violations(&reduced)
            ));
        }
        if plain.end_states != reduced.end_states {
            disagree.push(format!(
                "bound {bound:?}: end states: plain DFS {}, {} {} ({} in common)",
                plain.end_states.len(),
                reduction.name(),
                reduced.end_states.len(),
                plain.end_states.intersection(&reduced.end_states).count()
            ));
        }
    }
    disagree
}

/// Asserts that `reduction` agrees with plain DFS on `model`, listing every disagreement.
fn assert_agree(model: &dyn Model, reduction: Reduction) {
    let disagree = disagreements(model, reduction);
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// A model that keeps every shared value in engine objects, optionally declaring
/// `state_visible` (no task has a loop, so there is no checkpoint to name locals at).
struct Declared<F> {
    start: F,
    visible: bool,
}

impl<F: Fn() -> Rc<dyn Monitor> + Send + Sync> Model for Declared<F> {
    fn start(&self) -> Rc<dyn Monitor> {
        (self.start)()
    }

    fn reduction_safe(&self) -> bool {
        true
    }

    fn state_visible(&self) -> bool {
        self.visible
    }
}

/// setter: `yield_point; a.store(1); go.notify_one()`. parent: `v = a.load()`, then spawns a
/// child that captures `v`: `go.notified().await; if v == 0 { emit bad }`.
///
/// Visited states by value miss the bad run: the child's local state starts at zero whatever
/// `v` it captured, so "parent loaded 0, setter stored and is about to notify" and "setter
/// stored, parent loaded 1" are one state (a = 1, parent finished, child not started, setter at
/// its notify), and the search explores only the continuation of the first it reached.
#[test]
fn spawn_capture_visited_states() {
    let model = Declared {
        visible: true,
        start: || {
            let history = History::new(vec![Box::new(Never("bad")) as Box<dyn Invariant<Ev>>]);
            let a = Rc::new(Atomic::new("a", 0usize));
            let go = Rc::new(Notify::new("go"));
            {
                let (a, go) = (a.clone(), go.clone());
                sim::spawn("setter", async move {
                    sim::yield_point("work").await;
                    a.store(1).await;
                    go.notify_one().await;
                });
            }
            let h = history.clone();
            sim::spawn("parent", async move {
                let v = a.load().await;
                sim::spawn("child", async move {
                    go.notified().await;
                    if v == 0 {
                        h.emit(Ev("bad"));
                    }
                });
            });
            history.monitor()
        },
    };
    let plain = dfs(&model, None, Reduction::None);
    assert!(violations(&plain).contains("bad"), "plain DFS finds it");
    assert_agree(&model, Reduction::VisitedStates);
    assert_agree(&model, Reduction::PartialOrder);
    for reduction in [Reduction::VisitedStates, Reduction::PartialOrder] {
        assert!(dfs(&model, None, reduction).exhaustive, "{reduction:?}");
    }
}

/// a: `emit a`; b: `emit b`; invariants: no `a`, no `b`.
///
/// Partial-order reduction finds only one of the two: the first run's first step breaks an
/// invariant and ends the run, so the other task never takes a step, no race with it is ever
/// analysed, and nothing is left to backtrack to.
#[test]
fn partial_order_misses_a_task_a_violation_cut_short() {
    let model = Declared {
        visible: false,
        start: || {
            let history = History::new(vec![
                Box::new(Never("a")) as Box<dyn Invariant<Ev>>,
                Box::new(Never("b")),
            ]);
            for name in ["a", "b"] {
                let h = history.clone();
                sim::spawn(name, async move { h.emit(Ev(name)) });
            }
            history.monitor()
        },
    };
    assert_agree(&model, Reduction::PartialOrder);
}

/// waiter: `go.notified()`; notifier: `go.notify_one()`; idler: `go.notified_idle()`.
///
/// Plain DFS finds the deadlock where the idler takes the only permit and the waiter waits
/// forever. Partial-order reduction does not: in its first run the waiter takes the permit and
/// the idler, parked on `notified_idle` when the run ends, never executes it, so the race
/// between the idler's pending wait and the waiter's is never analysed.
#[test]
fn partial_order_misses_a_race_with_a_blocked_task() {
    let model = Declared {
        visible: false,
        start: || {
            let history = History::<Ev>::new(Vec::new());
            let go = Rc::new(Notify::new("go"));
            {
                let go = go.clone();
                sim::spawn("waiter", async move { go.notified().await });
            }
            {
                let go = go.clone();
                sim::spawn("notifier", async move { go.notify_one().await });
            }
            sim::spawn("idler", async move { go.notified_idle().await });
            history.monitor()
        },
    };
    let plain = dfs(&model, None, Reduction::None);
    assert!(
        violations(&plain).contains("deadlock"),
        "plain DFS finds it"
    );
    assert_agree(&model, Reduction::PartialOrder);
}

/// a and b each spawn a child that emits its parent's name. Which spawn comes first decides the
/// children's task numbers, so plain DFS reaches two end states (each task's events, by task
/// number). A spawn accesses nothing, so every reduction takes the two parents' steps as
/// independent and explores one order: one end state.
#[test]
fn spawn_order_renumbers_tasks() {
    let mut disagree = Vec::new();
    for (reduction, visible) in [
        (Reduction::PartialOrder, false),
        (Reduction::VisitedStates, false),
        (Reduction::VisitedStates, true),
    ] {
        let model = Declared {
            visible,
            start: || {
                let history = History::<Ev>::new(Vec::new());
                for name in ["a", "b"] {
                    let h = history.clone();
                    sim::spawn(name, async move {
                        sim::spawn(format!("child of {name}"), async move { h.emit(Ev(name)) });
                    });
                }
                history.monitor()
            },
        };
        let how = if visible { " (state_visible)" } else { "" };
        disagree.extend(
            disagreements(&model, reduction)
                .into_iter()
                .map(|d| format!("{d}{how}")),
        );
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// chooser: `if choose(2) == 1 { emit x }`; other: `emit y`; invariant: no `x` after a `y`.
///
/// Sleep sets (partial-order reduction, and visited states without a bound) put a task to sleep
/// with the accesses its step made when it was explored, but a step that draws a `choose` is one
/// step for every value: explored with 0 first it accesses nothing, so the chooser sleeps
/// through `other`'s emit, and drawing 1 after it (the violation) is never explored.
#[test]
fn sleep_sets_take_a_choose_step_for_one_value() {
    let mut disagree = Vec::new();
    for reduction in [Reduction::PartialOrder, Reduction::VisitedStates] {
        let model = Declared {
            visible: false,
            start: || {
                let history = History::new(vec![
                    Box::new(XAfterY { y: false }) as Box<dyn Invariant<Ev>>
                ]);
                {
                    let h = history.clone();
                    sim::spawn("chooser", async move {
                        if sim::choose(2).await == 1 {
                            h.emit(Ev("x"));
                        }
                    });
                }
                let h = history.clone();
                sim::spawn("other", async move { h.emit(Ev("y")) });
                history.monitor()
            },
        };
        disagree.extend(disagreements(&model, reduction));
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// Fails on an `x` after a `y`.
struct XAfterY {
    y: bool,
}

impl Invariant<Ev> for XAfterY {
    fn name(&self) -> &str {
        "x-after-y"
    }

    fn observe(&mut self, event: &Ev) -> Result<(), String> {
        match event.0 {
            "y" => self.y = true,
            "x" if self.y => return Err("x after y".into()),
            _ => {}
        }
        Ok(())
    }
}
