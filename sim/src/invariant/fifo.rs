//! Per-key FIFO: for each key, the sequence numbers observed must increase.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Display;

use super::Invariant;

type Extract<E, K, L> = Box<dyn Fn(&E) -> Vec<(K, u64, L)>>;
type FrameKey<L> = Box<dyn Fn(&L) -> String>;

/// Each event may advance several keys: (key, sequence number, label naming the item in a
/// violation message — formatted only then). A sequence number lower than one already seen on
/// its key is a violation.
pub struct FifoPerKey<E, K, L> {
    name: Cow<'static, str>,
    extract: Extract<E, K, L>,
    last: BTreeMap<K, (u64, L)>,
    /// The key the model marks an item's frames by (see `sim::mark`), if it marks them.
    frame_key: Option<FrameKey<L>>,
    /// The keys of the two items of the last violation: the one delivered first, then the
    /// older one that came after it.
    about: Vec<String>,
}

impl<E, K: Ord + Display, L: Display> FifoPerKey<E, K, L> {
    /// An invariant named `name` over the (key, sequence number, label) triples `extract` takes
    /// from each event.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        extract: impl Fn(&E) -> Vec<(K, u64, L)> + 'static,
    ) -> Self {
        FifoPerKey {
            name: name.into(),
            extract: Box::new(extract),
            last: BTreeMap::new(),
            frame_key: None,
            about: Vec::new(),
        }
    }

    /// Names each item by the key its frames carry in the model's marks (`sim::mark::on_wire`),
    /// so that the pictures of a violation highlight the two frames it is about.
    pub fn frames_keyed_by(mut self, key: impl Fn(&L) -> String + 'static) -> Self {
        self.frame_key = Some(Box::new(key));
        self
    }
}

impl<E, K: Ord + Display, L: Display> Invariant<E> for FifoPerKey<E, K, L> {
    fn name(&self) -> &str {
        &self.name
    }

    fn observe(&mut self, event: &E) -> Result<(), String> {
        for (key, seq, label) in (self.extract)(event) {
            if let Some((last, last_label)) = self.last.get(&key) {
                if seq < *last {
                    if let Some(frame_key) = &self.frame_key {
                        self.about = vec![frame_key(last_label), frame_key(&label)];
                    }
                    return Err(format!(
                        "{label} came after {last_label} on {key}, but was sent before it"
                    ));
                }
            }
            self.last.insert(key, (seq, label));
        }
        Ok(())
    }

    fn about(&self) -> Vec<String> {
        self.about.clone()
    }
}
