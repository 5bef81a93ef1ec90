//! The search for a linearization (see the module above): depth first over the calls that may
//! come next, with refuted (linearized set, state) pairs remembered.

use std::collections::HashSet;
use std::fmt;

use super::history::Call;
use super::Spec;

/// No order of the calls fits: the longest order that does, and why nothing may follow it.
#[derive(Debug, Clone)]
pub struct NotLinearizable {
    /// The longest real-time-respecting order found that the model agrees with, as
    /// "client: op -> ret" lines.
    pub longest: Vec<String>,
    /// Each call that could come next after it, and what the model would return there.
    pub next: Vec<String>,
    /// Calls that returned but are not in `longest`.
    pub left: usize,
}

impl fmt::Display for NotLinearizable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not linearizable: no order of the calls that respects real time gives every call \
             the return the model gives it. The longest order that fits ({} calls): [{}]; \
             {} returned call(s) left; none of those that may come next fits: {}",
            self.longest.len(),
            self.longest.join(", "),
            self.left,
            self.next.join("; ")
        )
    }
}

impl std::error::Error for NotLinearizable {}

/// `Ok` if `calls` (a `History`'s) have a linearization under `spec`.
pub fn check<S: Spec>(spec: &S, calls: &[Call<S::Op, S::Ret>]) -> Result<(), NotLinearizable> {
    let mut search = Search {
        spec,
        calls,
        refuted: HashSet::new(),
        order: Vec::new(),
        best: (Vec::new(), spec.init()),
    };
    let done = vec![0u64; calls.len().div_ceil(64)];
    if search.from(&done, spec.init()) {
        return Ok(());
    }
    let (order, state) = search.best.clone();
    let mut done = vec![0u64; calls.len().div_ceil(64)];
    for &i in &order {
        done[i / 64] |= 1 << (i % 64);
    }
    let describe = |i: usize, ret: Option<&S::Ret>| {
        let c = &calls[i];
        match ret {
            Some(r) => format!("{}: {:?} -> {r:?}", c.client, c.op),
            None => format!("{}: {:?} (never returned)", c.client, c.op),
        }
    };
    let next = search
        .candidates(&done)
        .into_iter()
        .map(|i| {
            let (_, model) = spec.apply(&state, &calls[i].op);
            format!(
                "{} where the model returns {model:?}",
                describe(i, calls[i].ret.as_ref())
            )
        })
        .collect();
    Err(NotLinearizable {
        longest: order
            .iter()
            .map(|&i| describe(i, calls[i].ret.as_ref()))
            .collect(),
        next,
        left: (0..calls.len())
            .filter(|&i| calls[i].returned.is_some() && !is_set(&done, i))
            .count(),
    })
}

fn is_set(done: &[u64], i: usize) -> bool {
    done[i / 64] & (1 << (i % 64)) != 0
}

struct Search<'a, S: Spec> {
    spec: &'a S,
    calls: &'a [Call<S::Op, S::Ret>],
    refuted: HashSet<(Vec<u64>, S::State)>,
    /// The order being tried, and the longest one seen with the state after it.
    order: Vec<usize>,
    best: (Vec<usize>, S::State),
}

impl<S: Spec> Search<'_, S> {
    /// The calls that may be linearized next: not yet linearized, and invoked before every
    /// call not yet linearized returned (real time).
    fn candidates(&self, done: &[u64]) -> Vec<usize> {
        let first_return = (0..self.calls.len())
            .filter(|&i| !is_set(done, i))
            .filter_map(|i| self.calls[i].returned)
            .min()
            .unwrap_or(usize::MAX);
        (0..self.calls.len())
            .filter(|&i| !is_set(done, i) && self.calls[i].invoked < first_return)
            .collect()
    }

    /// Whether the calls not in `done` can be linearized from `state`.
    fn from(&mut self, done: &[u64], state: S::State) -> bool {
        let returned_left =
            (0..self.calls.len()).any(|i| self.calls[i].returned.is_some() && !is_set(done, i));
        if !returned_left {
            // Calls that never returned may be left out: they need not have taken effect.
            return true;
        }
        if self.order.len() > self.best.0.len() {
            self.best = (self.order.clone(), state.clone());
        }
        let key = (done.to_vec(), state);
        if self.refuted.contains(&key) {
            return false;
        }
        let state = key.1.clone();
        for i in self.candidates(done) {
            let (after, ret) = self.spec.apply(&state, &self.calls[i].op);
            if self.calls[i].ret.as_ref().is_some_and(|r| *r != ret) {
                continue;
            }
            let mut next = done.to_vec();
            next[i / 64] |= 1 << (i % 64);
            self.order.push(i);
            let found = self.from(&next, after);
            self.order.pop();
            if found {
                return true;
            }
        }
        self.refuted.insert(key);
        false
    }
}
