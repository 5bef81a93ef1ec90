//! Defaults that never hide a bug (issue 18): the default check finds a depth-3 bug, a model
//! that does not choose a grain has its atomics explored, and a coarse grain is cross-checked.

use std::rc::Rc;

use models::registry;
use sim::check::{Check, Verdict};
use sim::history::History;
use sim::invariant::Invariant;
use sim::sync::Atomic;
use sim::{Grain, Model, Monitor};

/// The shipped fix at access grain: the race left needs 3 preemptions (PCT depth 3, the old
/// default, missed it in 10,000 runs).
#[test]
fn the_default_check_finds_a_three_preemption_race() {
    let params = serde_json::json!({ "publishers": 2, "grain": "access" });
    let model = registry::build("broker", "unbound-behind", &params).expect("valid broker");
    Check::new(model).assert_violates("delivery-order");
}

/// The reorder shape: a setter writes a = 1 then b = -1; a checker reads b then a and must
/// see (0, 0) or (1, -1).
fn reorder() -> Rc<dyn Monitor> {
    let (a, b) = (
        Rc::new(Atomic::new("a", 0i64)),
        Rc::new(Atomic::new("b", 0i64)),
    );
    let seen = History::new(vec![Box::new(TornPair)]);
    let (a2, b2) = (a.clone(), b.clone());
    sim::spawn("setter", async move {
        a2.store(1).await;
        b2.store(-1).await;
    });
    let log = seen.clone();
    sim::spawn("checker", async move {
        let b = b.load().await;
        let a = a.load().await;
        log.emit(Pair(a, b));
    });
    seen.monitor()
}

#[derive(Hash)]
struct Pair(i64, i64);

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "read a = {}, b = {}", self.0, self.1)
    }
}

struct TornPair;

impl Invariant<Pair> for TornPair {
    fn name(&self) -> &str {
        "torn-pair"
    }

    fn observe(&mut self, pair: &Pair) -> Result<(), String> {
        match (pair.0, pair.1) {
            (0, 0) | (1, -1) => Ok(()),
            _ => Err(pair.to_string()),
        }
    }
}

/// A model that never thought about grain: the trait's default.
struct Reorder;

impl Model for Reorder {
    fn start(&self) -> Rc<dyn Monitor> {
        reorder()
    }
}

/// The same model, choosing the coarse grain explicitly.
struct ReorderAtAwaitGrain;

impl Model for ReorderAtAwaitGrain {
    fn start(&self) -> Rc<dyn Monitor> {
        reorder()
    }

    fn grain(&self) -> Grain {
        Grain::Await
    }
}

#[test]
fn a_model_that_does_not_choose_a_grain_has_its_atomics_explored() {
    assert_eq!(Reorder.grain(), Grain::Access);
    Check::new(Box::new(Reorder)).assert_violates("torn-pair");
}

#[test]
fn a_coarse_grain_holds_only_until_access_grain_runs_find_the_race() {
    match Check::new(Box::new(ReorderAtAwaitGrain)).run() {
        Verdict::Violated(found) => {
            let (invariant, message) = &found[0];
            assert_eq!(invariant, "torn-pair");
            assert!(
                message.contains("access grain") && message.contains("await grain"),
                "{message}"
            );
        }
        other => panic!("a coarse grain must not hide the race: {other:?}"),
    }
}
