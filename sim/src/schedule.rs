//! Schedules: the decisions of one run, by stable task name, and how a replay can diverge.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// One decision of a run: which task took the next step, or which value a `choose` drew.
/// Serialised as `"router:p1"` or `{"choose": 1}` so a replay file reads like a story; a value
/// drawn within a step names what it decided (`{"choose": 1, "what": "disk(kv): the unsynced
/// write of 4 bytes at 0 to /data/log: 0 kept, 1 lost, 2 torn"}`). A task's name is shared,
/// not copied, by every decision that names it: a run records one per step. Read strictly: an
/// object with any key but one `choose` and at most one `what` is an error; `what` is for
/// readers, and a replay follows the value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum Decision {
    /// Run the task with this (stable) name next.
    Task(Arc<str>),
    /// Take this value for a choice within a step (a `choose`, a crash's outcome per unsynced
    /// write).
    Choice {
        /// The value's index among the choice's options.
        choose: usize,
        /// What the value decided, for readers (a replay follows `choose`).
        #[serde(skip_serializing_if = "Option::is_none")]
        what: Option<Arc<str>>,
    },
}

impl<'de> Deserialize<'de> for Decision {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DecisionVisitor)
    }
}

struct DecisionVisitor;

impl<'de> Visitor<'de> for DecisionVisitor {
    type Value = Decision;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a task name or {\"choose\": n}")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Decision, E> {
        Ok(Decision::Task(Arc::from(name)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decision, A::Error> {
        let mut choose = None;
        let mut what: Option<Arc<str>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "choose" if choose.is_none() => choose = Some(map.next_value::<usize>()?),
                "what" if what.is_none() => what = Some(Arc::from(map.next_value::<String>()?)),
                "choose" | "what" => return Err(de::Error::duplicate_field("choose or what")),
                _ => return Err(de::Error::unknown_field(&key, &["choose", "what"])),
            }
        }
        let choose = choose.ok_or_else(|| de::Error::missing_field("choose"))?;
        Ok(Decision::Choice { choose, what })
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Task(name) => write!(f, "{name}"),
            Decision::Choice { choose, what: None } => write!(f, "choose {choose}"),
            Decision::Choice {
                choose,
                what: Some(what),
            } => write!(f, "choose {choose} ({what})"),
        }
    }
}

/// A replayed schedule that no longer fits the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// The step at which the recorded decision could not be followed.
    pub step: usize,
    /// What the schedule recorded there ("end of schedule" when it ran out).
    pub expected: String,
    /// What the model offered instead.
    pub found: String,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "diverged at step {}: the schedule says {}, the model offers {}",
            self.step, self.expected, self.found
        )
    }
}

impl std::error::Error for Divergence {}
