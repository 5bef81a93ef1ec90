//! A proof covers what it says: cases where a search by state once said "holds" for a program
//! with a bug (an accept loop's captured requests, a livelock, hidden state), each checked against
//! plain DFS or against the violation it must report. (The setter/parent/child spawn-capture
//! shape is in `soundness.rs`.)

use std::fmt;
use std::rc::Rc;

use sim::explore::{Explorer, Summary};
use sim::invariant::Invariant;
use sim::strategy::{Reduction, StrategyKind};
use sim::sync::{channel, Atomic};
use sim::{yield_point, History, Model, Monitor};

#[derive(Hash)]
struct Ev(String);

impl fmt::Display for Ev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn dfs(model: &dyn Model, reduction: Reduction) -> Summary {
    Explorer::new(model)
        .experimental_partial_order(true)
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction,
        })
        .run()
        .expect("explores")
}

/// What a search establishes: violated invariants, end states, whether it finished.
fn outcome(s: &Summary) -> (Vec<String>, usize, bool) {
    let mut found: Vec<String> = s.violations.iter().map(|f| f.invariant.clone()).collect();
    found.sort();
    (found, s.end_states.len(), s.exhaustive)
}

/// Two clients send a request each; an accept loop receives them and spawns one handler per
/// request, which reports the request it was handed and its place in the accept order (both
/// captured: once the acceptor is done, they live only in the handlers' futures).
struct AcceptLoop;

impl Model for AcceptLoop {
    fn reduction_safe(&self) -> bool {
        true
    }
    fn state_visible(&self) -> bool {
        true
    }
    fn start(&self) -> Rc<dyn Monitor> {
        let history = History::new(Vec::new());
        let (tx, rx) = channel::<u32>("requests", 2);
        for client in 1..=2u32 {
            let tx = tx.clone();
            sim::spawn(format!("client:{client}"), async move {
                tx.send(client).await;
            });
        }
        let h = history.clone();
        sim::spawn("acceptor", async move {
            for accepted in 0..2u32 {
                sim::checkpoint("accept", &accepted);
                let request = rx.recv().await;
                let h = h.clone();
                sim::spawn("handler", async move {
                    yield_point("handle").await;
                    h.emit(Ev(format!("handled {request} as request {accepted}")));
                });
            }
        });
        history.monitor()
    }
}

#[test]
fn an_accept_loop_reaches_every_end_state_by_value() {
    let plain = dfs(&AcceptLoop, Reduction::None);
    // Requests accepted in either order, each handler reporting what it was handed.
    assert_eq!(plain.end_states.len(), 2);
    for reduction in [Reduction::VisitedStates, Reduction::PartialOrder] {
        let reduced = dfs(&AcceptLoop, reduction);
        assert_eq!(outcome(&reduced), outcome(&plain), "{reduction:?}");
    }
}

/// A waiter polls a flag with a plain await between polls, its whole state checkpointed.
/// With `setter`, a setter stores the flag: a correct spin-wait. Without, nobody ever does: a
/// livelock, which a search by state sees as the run coming back to a state on its own path.
struct Spin {
    setter: bool,
}

impl Model for Spin {
    fn reduction_safe(&self) -> bool {
        true
    }
    fn state_visible(&self) -> bool {
        true
    }
    fn start(&self) -> Rc<dyn Monitor> {
        let history = History::<Ev>::new(Vec::new());
        let flag = Rc::new(Atomic::new("flag", false));
        if self.setter {
            let flag = flag.clone();
            sim::spawn("setter", async move {
                yield_point("work").await;
                flag.store(true).await;
            });
        }
        sim::spawn("waiter", async move {
            loop {
                sim::checkpoint("poll", &());
                if flag.load().await {
                    break;
                }
                yield_point("poll").await;
            }
        });
        history.monitor()
    }
}

#[test]
fn a_livelock_is_reported_not_proved() {
    for reduction in [Reduction::VisitedStates, Reduction::None] {
        let s = dfs(&Spin { setter: false }, reduction);
        assert_eq!(outcome(&s).0, ["livelock"], "{reduction:?}");
        let message = &s.violations[0].message;
        assert!(
            message.contains("came back to its state of step"),
            "{message}"
        );
    }
}

#[test]
fn a_spin_wait_that_ends_is_proved_without_a_livelock() {
    for reduction in [Reduction::VisitedStates, Reduction::None] {
        let s = dfs(&Spin { setter: true }, reduction);
        assert!(s.violations.is_empty(), "{reduction:?}: {:?}", s.violations);
        assert!(s.exhaustive && s.runs > 0 && !s.end_states.is_empty());
    }
}

#[test]
fn a_livelock_replays_to_the_same_violation() {
    let s = dfs(&Spin { setter: false }, Reduction::VisitedStates);
    let found = &s.violations[0];
    let decisions = found.run.decisions();
    let replay = sim::strategy::Replay::strict(decisions).watching_states(true);
    let (r, _) = sim::run_once(
        &Spin { setter: false },
        Box::new(replay),
        0,
        &Default::default(),
    );
    assert_eq!(r.violation(), found.run.violation());
    assert_eq!(r.digest, found.run.digest);
}

/// Two tasks append to a plain `RefCell` they share, after an await each, and the order must be
/// first then second: a model that breaks what it declares (`reduction_safe`, `state_visible`),
/// since the engine cannot see the cell. The reduced search trusts the declaration and misses
/// the wrong order; the audit re-explores what it pruned and catches it.
struct SharedCell;

/// Fails at quiescence unless the log reads [0, 1].
struct InOrder(Rc<std::cell::RefCell<Vec<usize>>>);

impl Invariant<Ev> for InOrder {
    fn name(&self) -> &str {
        "in-order"
    }
    fn observe(&mut self, _: &Ev) -> Result<(), String> {
        Ok(())
    }
    fn at_quiescence(&mut self) -> Result<(), String> {
        let log = self.0.borrow();
        match log.as_slice() {
            [0, 1] => Ok(()),
            other => Err(format!("appended in order {other:?}")),
        }
    }
}

impl Model for SharedCell {
    fn reduction_safe(&self) -> bool {
        true // wrongly: the cell below is shared behind the engine's back
    }
    fn state_visible(&self) -> bool {
        true
    }
    fn start(&self) -> Rc<dyn Monitor> {
        let log = Rc::new(std::cell::RefCell::new(Vec::new()));
        let history = History::new(vec![Box::new(InOrder(log.clone()))]);
        for id in 0..2 {
            let log = log.clone();
            sim::spawn(format!("appender:{id}"), async move {
                yield_point("work").await;
                log.borrow_mut().push(id);
            });
        }
        history.monitor()
    }
}

#[test]
fn the_audit_catches_a_model_that_breaks_its_declarations() {
    let plain = dfs(&SharedCell, Reduction::None);
    assert_eq!(
        outcome(&plain).0,
        ["in-order"],
        "plain DFS sees both orders"
    );
    for reduction in [Reduction::VisitedStates, Reduction::PartialOrder] {
        let s = Explorer::new(&SharedCell)
            .experimental_partial_order(true)
            .strategy(StrategyKind::Dfs {
                preemption_bound: None,
                reduction,
            })
            .audit(32)
            .run()
            .expect("explores");
        assert!(
            s.violations.is_empty(),
            "{reduction:?}: the reduction trusts the model"
        );
        let audit = s.audit.expect("audited");
        assert!(!audit.passed(), "{reduction:?}: {audit:?}");
        let missed = &audit.misses[0];
        assert!(missed.what.contains("in-order"), "{}", missed.what);
        assert_eq!(missed.run.violation().unwrap().invariant, "in-order");
    }
}

#[test]
fn the_audit_passes_a_model_that_keeps_its_declarations() {
    let s = Explorer::new(&AcceptLoop)
        .strategy(StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .audit(32)
        .run()
        .expect("explores");
    let audit = s.audit.expect("audited");
    assert!(audit.passed() && audit.audited > 0, "{audit:?}");
}

/// A poller counts its rounds in a local it leaves out of its checkpoint, and reports the third:
/// its named state repeats while its real state does not. The search must not call that a
/// livelock (nor prove anything): going round the cycle again, the third round's event shows
/// the state the model hid, and the run is reported as breaking `state_visible`.
struct UnnamedCounter;

impl Model for UnnamedCounter {
    fn reduction_safe(&self) -> bool {
        true
    }
    /// At await grain the loop has one scheduling point, so the cycle the search first sees
    /// (round 1 to 2) is followed by the round that emits; at access grain the load is a point
    /// too, the cycle is seen a round later, and going round once more repeats it (a livelock,
    /// which the flag nobody sets also makes this).
    fn grain(&self) -> sim::Grain {
        sim::Grain::Await
    }
    fn state_visible(&self) -> bool {
        true
    }
    fn start(&self) -> Rc<dyn Monitor> {
        let history = History::<Ev>::new(Vec::new());
        let h = history.clone();
        let flag = Rc::new(Atomic::new("flag", false));
        sim::spawn("poller", async move {
            let mut rounds = 0;
            loop {
                sim::checkpoint("poll", &()); // wrongly: `rounds` lives across iterations
                if flag.load().await {
                    break;
                }
                rounds += 1;
                if rounds == 3 {
                    h.emit(Ev("third round".into()));
                }
                yield_point("poll").await;
            }
        });
        history.monitor()
    }
}

#[test]
fn a_checkpoint_that_hides_a_local_is_reported_as_hidden_state() {
    for reduction in [Reduction::VisitedStates, Reduction::None] {
        let s = dfs(&UnnamedCounter, reduction);
        assert_eq!(outcome(&s).0, ["hidden-state"], "{reduction:?}");
        let message = &s.violations[0].message;
        assert!(message.contains("sim::checkpoint"), "{message}");
        // The replay file's schedule reproduces it, step for step.
        let found = &s.violations[0].run;
        let replay = sim::strategy::Replay::strict(found.decisions()).watching_states(true);
        let (r, _) = sim::run_once(&UnnamedCounter, Box::new(replay), 0, &Default::default());
        assert_eq!(r.violation(), found.violation());
    }
}
