//! `braid::linearizable`: checked against a brute-force reference (every order of the calls) on
//! generated histories, and used as a property of a service explored by braid: a key-value
//! store whose increment reads and writes under one lock holds; one that takes the lock twice
//! is found losing an increment, with the history as its counterexample.

use std::collections::BTreeMap;
use std::sync::Arc;

use braid::linearizable::{check, Call, History, Spec};
use braid::tokio::{self, sync::Mutex};
use braid::{Outcome, Strategy};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Registers by key: `Put(k, v)` returns the old value, `Get(k)` the value, `Incr(k)` the new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Put(u8, u32),
    Get(u8),
    Incr(u8),
}

struct Kv;

impl Spec for Kv {
    type State = BTreeMap<u8, u32>;
    type Op = Op;
    type Ret = u32;
    fn init(&self) -> Self::State {
        BTreeMap::new()
    }
    fn apply(&self, s: &Self::State, op: &Op) -> (Self::State, u32) {
        let mut s = s.clone();
        let ret = match *op {
            Op::Put(k, v) => s.insert(k, v).unwrap_or(0),
            Op::Get(k) => s.get(&k).copied().unwrap_or(0),
            Op::Incr(k) => {
                let v = s.entry(k).or_insert(0);
                *v += 1;
                *v
            }
        };
        (s, ret)
    }
}

/// The reference: some permutation of the calls that respects real time (and leaves out any
/// subset of the calls that never returned) replays with the same returns.
fn brute_force(calls: &[Call<Op, u32>]) -> bool {
    fn go(calls: &[Call<Op, u32>], used: &mut Vec<bool>, state: &BTreeMap<u8, u32>) -> bool {
        if (0..calls.len()).all(|i| used[i] || calls[i].returned.is_none()) {
            return true;
        }
        for i in 0..calls.len() {
            if used[i] {
                continue;
            }
            // Every call not yet placed that returned before `i` was invoked must come first.
            let blocked = (0..calls.len()).any(|j| {
                !used[j] && j != i && calls[j].returned.is_some_and(|r| r < calls[i].invoked)
            });
            if blocked {
                continue;
            }
            let (next, ret) = Kv.apply(state, &calls[i].op);
            if calls[i].ret.is_some_and(|r| r != ret) {
                continue;
            }
            used[i] = true;
            let ok = go(calls, used, &next);
            used[i] = false;
            if ok {
                return true;
            }
        }
        false
    }
    go(calls, &mut vec![false; calls.len()], &BTreeMap::new())
}

/// A random history of up to 6 calls on 2 keys by 3 clients, with returns that are sometimes
/// right (from a sequential run of some order) and sometimes perturbed, and some calls pending.
fn generate(seed: u64) -> History<Op, u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let h = History::new();
    let mut state = BTreeMap::new();
    let mut open: Vec<(braid::linearizable::CallId, u32)> = Vec::new();
    let n = rng.gen_range(1..=6);
    for c in 0..n {
        let op = match rng.gen_range(0..3) {
            0 => Op::Put(rng.gen_range(0..2), rng.gen_range(1..4)),
            1 => Op::Get(rng.gen_range(0..2)),
            _ => Op::Incr(rng.gen_range(0..2)),
        };
        let call = h.invoke(format!("c{}", c % 3), op);
        let (next, mut ret) = Kv.apply(&state, &op);
        state = next;
        if rng.gen_ratio(1, 4) {
            ret = rng.gen_range(0..4);
        }
        open.push((call, ret));
        // Respond to some open calls, in a random order.
        while !open.is_empty() && rng.gen_bool(0.5) {
            let (call, ret) = open.remove(rng.gen_range(0..open.len()));
            h.respond(call, ret);
        }
    }
    for (call, ret) in open {
        if rng.gen_bool(0.8) {
            h.respond(call, ret);
        }
    }
    h
}

#[test]
fn the_checker_agrees_with_brute_force_on_generated_histories() {
    let (mut yes, mut no) = (0, 0);
    for seed in 0..3_000 {
        let calls = generate(seed).calls();
        let fast = check(&Kv, &calls).is_ok();
        assert_eq!(fast, brute_force(&calls), "seed {seed}: {calls:#?}");
        if fast {
            yes += 1
        } else {
            no += 1
        }
    }
    // Both verdicts are exercised.
    assert!(yes > 300 && no > 300, "{yes} linearizable, {no} not");
}

#[test]
fn a_stale_read_is_not_linearizable_and_the_counterexample_says_why() {
    let h = History::new();
    let w = h.invoke("writer", Op::Put(0, 7));
    h.respond(w, 0);
    let r = h.invoke("reader", Op::Get(0)); // invoked after the write returned
    h.respond(r, 0);
    let e = check(&Kv, &h.calls()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("reader: Get(0) -> 0 where the model returns 7"),
        "{text}"
    );
    assert_eq!(e.left, 1);
}

#[test]
fn a_call_that_never_returned_may_or_may_not_have_taken_effect() {
    for seen in [0, 5] {
        let h = History::new();
        let _lost = h.invoke("crashed", Op::Put(0, 5));
        let r = h.invoke("reader", Op::Get(0));
        h.respond(r, seen);
        assert!(check(&Kv, &h.calls()).is_ok(), "reader saw {seen}");
    }
}

/// A store whose increment reads and writes under one lock (`atomic`), or takes the lock once
/// to read and again to write (the lost update).
#[derive(Clone, Default)]
struct Store(Arc<Mutex<BTreeMap<u8, u32>>>);

impl Store {
    async fn incr(&self, k: u8, atomic: bool) -> u32 {
        if atomic {
            let mut m = self.0.lock().await;
            let v = m.entry(k).or_insert(0);
            *v += 1;
            return *v;
        }
        let v = *self.0.lock().await.get(&k).unwrap_or(&0) + 1;
        self.0.lock().await.insert(k, v);
        v
    }

    async fn get(&self, k: u8) -> u32 {
        *self.0.lock().await.get(&k).unwrap_or(&0)
    }
}

fn clients(atomic: bool) -> braid::Check {
    braid::check(move || async move {
        let store = Store::default();
        let history = History::new();
        let mut tasks = Vec::new();
        for c in 0..2 {
            let (store, history) = (store.clone(), history.clone());
            tasks.push(tokio::spawn(async move {
                let call = history.invoke(format!("client{c}"), Op::Incr(0));
                let v = store.incr(0, atomic).await;
                history.respond(call, v);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let call = history.invoke("checker", Op::Get(0));
        let v = store.get(0).await;
        history.respond(call, v);
        braid::linearizable(&Kv, &history);
    })
    .strategy(Strategy::dfs(None))
}

#[test]
fn an_increment_under_one_lock_is_linearizable_on_every_schedule() {
    let report = clients(true).run();
    assert!(
        matches!(
            report.outcome,
            Outcome::Holds {
                exhaustive: true,
                ..
            }
        ),
        "{:?}",
        report.outcome
    );
}

#[test]
fn an_increment_that_takes_the_lock_twice_is_found_not_linearizable() {
    let report = clients(false).out(std::env::temp_dir()).run();
    let Outcome::Failed(failure) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(failure.invariant, "panic");
    assert!(
        failure.message.contains("not linearizable") && failure.message.contains("Incr(0) -> 1"),
        "{}",
        failure.message
    );
}
