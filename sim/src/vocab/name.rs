//! An object's name, for traces and deadlock reports. Most are literals; the ones the run
//! hands out (`mutex#3`, a join's task name) are shared with earlier runs on the thread, so no
//! run allocates them (see `rt::execution::names`).

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A literal, a name shared with earlier runs or a task, or one made for the object.
#[derive(Clone, Debug)]
pub struct Name(Repr);

#[derive(Clone, Debug)]
enum Repr {
    Literal(&'static str),
    Shared(Arc<str>),
    Made(String),
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        match &self.0 {
            Repr::Literal(s) => s,
            Repr::Shared(s) => s,
            Repr::Made(s) => s,
        }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl From<&'static str> for Name {
    fn from(s: &'static str) -> Self {
        Name(Repr::Literal(s))
    }
}

impl From<String> for Name {
    fn from(s: String) -> Self {
        Name(Repr::Made(s))
    }
}

impl From<Arc<str>> for Name {
    fn from(s: Arc<str>) -> Self {
        Name(Repr::Shared(s))
    }
}

impl From<Cow<'static, str>> for Name {
    fn from(s: Cow<'static, str>) -> Self {
        match s {
            Cow::Borrowed(s) => s.into(),
            Cow::Owned(s) => s.into(),
        }
    }
}

impl From<&'static String> for Name {
    fn from(s: &'static String) -> Self {
        Name(Repr::Literal(s))
    }
}
