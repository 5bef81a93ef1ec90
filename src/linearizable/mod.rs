//! Linearizability: does a recorded history of concurrent calls (each an invocation and, if it
//! returned, a response) have an order of the calls that respects real time (a call that
//! returned before another was invoked comes first) and that a sequential model of the service
//! answers exactly as the service did? The question Knossos and stateright's linearizability
//! tester ask of a service's history; braid asks it on every schedule it explores.
//!
//! Record with a [`History`] (not a scheduling point: recording changes no schedule), then call
//! [`linearizable`] with the model at the end of the test. A call that never returned (its task
//! was dropped, or crashed) may have taken effect or not: both are tried.
//!
//! The search is Wing and Gong's with Lowe's memo (G. Lowe, "Testing for linearizability",
//! Concurrency and Computation 2017): take the earliest event; an invocation may be linearized
//! now if the model returns what the call returned; a response whose call is not linearized yet
//! means backtrack. Pairs (calls linearized, model state) already refuted are not tried again,
//! so a history of `n` calls costs at most `2^n` states and usually far fewer.

mod history;
mod search;

pub use history::{Call, CallId, History};
pub use search::{check, NotLinearizable};

use std::fmt::Debug;
use std::hash::Hash;

/// A sequential model of a service: its state, and what each operation returns and does to it.
///
/// ```
/// /// A register: `Some(v)` writes, `None` reads.
/// #[derive(Clone, Default)]
/// struct Register;
///
/// impl braid::linearizable::Spec for Register {
///     type State = u32;
///     type Op = Option<u32>;
///     type Ret = u32;
///     fn init(&self) -> u32 {
///         0
///     }
///     fn apply(&self, state: &u32, op: &Option<u32>) -> (u32, u32) {
///         match op {
///             Some(v) => (*v, *v),
///             None => (*state, *state),
///         }
///     }
/// }
/// ```
pub trait Spec {
    /// The model's state (hashed for the memo).
    type State: Clone + Hash + Eq;
    /// An operation, as invoked.
    type Op: Clone + Debug;
    /// What an operation returns.
    type Ret: Clone + Debug + PartialEq;

    /// The state before any call.
    fn init(&self) -> Self::State;

    /// The state after `op`, and what it returns.
    fn apply(&self, state: &Self::State, op: &Self::Op) -> (Self::State, Self::Ret);
}

/// Panics with a counterexample unless `history` is linearizable with respect to `spec`: in a
/// braid test, a violation, shrunk and replayable like any other.
///
/// ```
/// # #[derive(Clone, Default)] struct Register;
/// # impl braid::linearizable::Spec for Register {
/// #     type State = u32; type Op = Option<u32>; type Ret = u32;
/// #     fn init(&self) -> u32 { 0 }
/// #     fn apply(&self, s: &u32, op: &Option<u32>) -> (u32, u32) {
/// #         match op { Some(v) => (*v, *v), None => (*s, *s) }
/// #     }
/// # }
/// use braid::linearizable::History;
///
/// let h = History::new();
/// let w = h.invoke("writer", Some(1));
/// let r = h.invoke("reader", None); // overlaps the write: may see 0 or 1
/// h.respond(r, 0);
/// h.respond(w, 1);
/// braid::linearizable(&Register, &h);
/// ```
pub fn linearizable<S: Spec>(spec: &S, history: &History<S::Op, S::Ret>) {
    if let Err(e) = check(spec, &history.calls()) {
        panic!("{e}");
    }
}
