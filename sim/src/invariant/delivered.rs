//! Eventually delivered: everything owed to a receiver has reached it once no task can run.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Display;

use super::Invariant;

type Extract<E, K> = Box<dyn Fn(&E) -> Option<K>>;

/// Everything owed to a receiver (by `owed`) has been delivered (by `delivered`) once the run is
/// quiescent: a lost message is a violation at the end of the run.
pub struct EventuallyDelivered<E, K> {
    name: Cow<'static, str>,
    owed: Extract<E, K>,
    delivered: Extract<E, K>,
    outstanding: BTreeSet<K>,
}

impl<E, K: Ord + Display> EventuallyDelivered<E, K> {
    /// `owed` names what an event obliges the system to deliver; `delivered` what it delivers.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        owed: impl Fn(&E) -> Option<K> + 'static,
        delivered: impl Fn(&E) -> Option<K> + 'static,
    ) -> Self {
        EventuallyDelivered {
            name: name.into(),
            owed: Box::new(owed),
            delivered: Box::new(delivered),
            outstanding: BTreeSet::new(),
        }
    }
}

impl<E, K: Ord + Display> Invariant<E> for EventuallyDelivered<E, K> {
    fn name(&self) -> &str {
        &self.name
    }

    fn observe(&mut self, event: &E) -> Result<(), String> {
        if let Some(k) = (self.owed)(event) {
            self.outstanding.insert(k);
        }
        if let Some(k) = (self.delivered)(event) {
            self.outstanding.remove(&k);
        }
        Ok(())
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        if self.outstanding.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = self.outstanding.iter().map(|k| k.to_string()).collect();
        Err(format!(
            "stranded at quiescence, never delivered: {}",
            list.join(", ")
        ))
    }
}
