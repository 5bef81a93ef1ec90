//! No duplicate: each item is delivered at most once, unless the event marks the repeat as an
//! allowed redelivery (an MQTT DUP resend, say).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Display;

use super::Invariant;

type Extract<E, K> = Box<dyn Fn(&E) -> Option<(K, bool)>>;

/// Each item is delivered at most once, unless its event marks it as an allowed redelivery.
pub struct NoDuplicate<E, K> {
    name: Cow<'static, str>,
    extract: Extract<E, K>,
    seen: BTreeSet<K>,
}

impl<E, K: Ord + Display> NoDuplicate<E, K> {
    /// `extract` gives the delivered item and whether a repeat of it is an allowed redelivery.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        extract: impl Fn(&E) -> Option<(K, bool)> + 'static,
    ) -> Self {
        NoDuplicate {
            name: name.into(),
            extract: Box::new(extract),
            seen: BTreeSet::new(),
        }
    }
}

impl<E, K: Ord + Display> Invariant<E> for NoDuplicate<E, K> {
    fn name(&self) -> &str {
        &self.name
    }

    fn observe(&mut self, event: &E) -> Result<(), String> {
        if let Some((key, redelivery)) = (self.extract)(event) {
            if self.seen.contains(&key) && !redelivery {
                return Err(format!("{key} delivered twice"));
            }
            self.seen.insert(key);
        }
        Ok(())
    }
}
