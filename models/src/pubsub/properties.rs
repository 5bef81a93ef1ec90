//! The pubsub layer's invariants. `retained-subscribed` is shared with the relay model, which
//! retains topics through the same layer.

use std::rc::Rc;

use sim::invariant::Invariant;

use super::connection::Conn;
use super::layer::TopicState;
use super::Event;

/// Every retained topic is eventually subscribed: at quiescence, each topic with a retain is
/// carried by the subscriber's broker link (else its events are lost).
pub struct RetainedSubscribed {
    pub state: Rc<TopicState>,
}

impl<E> Invariant<E> for RetainedSubscribed {
    fn name(&self) -> &str {
        "retained-subscribed"
    }

    fn observe(&mut self, _event: &E) -> Result<(), String> {
        Ok(())
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        let missing: Vec<String> = self
            .state
            .missing()
            .iter()
            .map(|(t, n)| format!("{t} (refcount {n})"))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "retained but never subscribed, its events lost: {}",
                missing.join(", ")
            ))
        }
    }
}

/// Refcounts match the retains the connections hold.
struct Refcounts {
    state: Rc<TopicState>,
    conns: Rc<Vec<Conn>>,
}

impl Invariant<Event> for Refcounts {
    fn name(&self) -> &str {
        "integrity"
    }

    fn observe(&mut self, _event: &Event) -> Result<(), String> {
        Ok(())
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        let refcounts = self.state.refcounts.with(|r| r.clone());
        let mut held = std::collections::BTreeMap::new();
        for c in self.conns.iter() {
            for t in c.retained.with(|r| r.clone()) {
                *held.entry(t).or_insert(0usize) += 1;
            }
        }
        if refcounts != held {
            return Err(format!(
                "topic refcounts {refcounts:?} differ from the retains connections hold {held:?}"
            ));
        }
        Ok(())
    }
}

/// The properties every run must have.
///
/// - `retained-subscribed`: at quiescence every retained topic is subscribed.
/// - `integrity`: at quiescence the refcounts are the retains the connections hold.
///
/// Deadlock (a retain stuck on a full queue with the lifecycle lock held, and CLOSE or teardown
/// stuck behind it) is the engine's own check.
pub fn invariants(state: Rc<TopicState>, conns: Rc<Vec<Conn>>) -> Vec<Box<dyn Invariant<Event>>> {
    vec![
        Box::new(RetainedSubscribed {
            state: state.clone(),
        }),
        Box::new(Refcounts { state, conns }),
    ]
}
