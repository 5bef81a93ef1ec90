//! Named properties over a history, declared next to the code they judge (as stateright's
//! `always` and `eventually`): push events to a [`Log`], and braid checks every property
//! without a `Monitor` to write or a step to invent.

use std::fmt::{self, Debug};
use std::hash::{Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;

use sim::invariant::Invariant;
use sim::History;

/// A named property of a [`Log`]'s events: [`always`] or [`eventually`].
///
/// ```
/// let sorted: braid::Property<u32> = braid::always("sorted", |e| e.windows(2).all(|w| w[0] <= w[1]));
/// braid::check(move || {
///     let sorted = braid::always("sorted", |e: &[u32]| e.windows(2).all(|w| w[0] <= w[1]));
///     async move {
///         let log = braid::Log::new([sorted]);
///         log.push(1);
///         log.push(2);
///     }
/// })
/// .assert_holds();
/// # drop(sorted);
/// ```
pub struct Property<E> {
    name: String,
    when: When,
    holds: Rc<Predicate<E>>,
}

/// What a property says of the events so far.
type Predicate<E> = dyn Fn(&[E]) -> bool;

#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    /// After every event.
    Always,
    /// Once, when the run is over and no task can move (quiescence).
    Eventually,
}

/// A property that must hold after every event: checked as each one is pushed, so a violation
/// stops the run at the step that broke it.
///
/// ```
/// braid::check(|| async {
///     let log = braid::Log::new([braid::always("at most two", |e: &[u32]| e.len() <= 2)]);
///     log.push(1);
///     log.push(2);
/// })
/// .assert_holds();
/// ```
pub fn always<E>(name: &str, holds: impl Fn(&[E]) -> bool + 'static) -> Property<E> {
    Property {
        name: name.to_string(),
        when: When::Always,
        holds: Rc::new(holds),
    }
}

/// A property that must hold once the run is over: checked at quiescence, when no task can
/// move (every task finished, or the test body finished and the rest are blocked).
///
/// ```
/// braid::check(|| async {
///     let log = braid::Log::new([braid::eventually("both", |e: &[&str]| e.len() == 2)]);
///     let l = log.clone();
///     let a = braid::spawn(async move { l.push("a") });
///     log.push("b");
///     a.await.unwrap();
/// })
/// .assert_holds();
/// ```
pub fn eventually<E>(name: &str, holds: impl Fn(&[E]) -> bool + 'static) -> Property<E> {
    Property {
        name: name.to_string(),
        when: When::Eventually,
        holds: Rc::new(holds),
    }
}

/// The events of one run, judged by its properties. Create it inside the test; clones share
/// one log (hand one to each task).
///
/// ```
/// let report = braid::check(|| async {
///     let log = braid::Log::new([braid::always("no zero", |e: &[u8]| !e.contains(&0))]);
///     log.push(1);
///     log.push(0);
/// })
/// .run();
/// assert_eq!(report.failure().unwrap().invariant, "no zero");
/// ```
pub struct Log<E> {
    history: History<Shown<E>>,
}

impl<E> Clone for Log<E> {
    fn clone(&self) -> Self {
        Log {
            history: self.history.clone(),
        }
    }
}

impl<E: Clone + Hash + Debug + 'static> Log<E> {
    /// A log judged by `properties` (each named in the violation it reports).
    pub fn new(properties: impl IntoIterator<Item = Property<E>>) -> Self {
        let invariants = properties
            .into_iter()
            .map(|p| {
                Box::new(Judge {
                    property: p,
                    events: Vec::new(),
                }) as Box<dyn Invariant<Shown<E>>>
            })
            .collect();
        let history = History::new(invariants);
        sim::watch(history.monitor());
        Log { history }
    }

    /// Records an event (part of the current step: not a scheduling point of its own) and
    /// checks the `always` properties.
    pub fn push(&self, event: E) {
        self.history.emit(Shown(event));
    }
}

/// An event, shown in traces by its `Debug` form.
struct Shown<E>(E);

impl<E: Debug> fmt::Display for Shown<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl<E: Hash> Hash for Shown<E> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

/// One property with the events so far.
struct Judge<E> {
    property: Property<E>,
    events: Vec<E>,
}

impl<E: Debug> Judge<E> {
    fn judge(&self) -> Result<(), String> {
        let holds = panic::catch_unwind(AssertUnwindSafe(|| (self.property.holds)(&self.events)));
        let shown = || {
            const SHOWN: usize = 8;
            let n = self.events.len();
            let tail = &self.events[n.saturating_sub(SHOWN)..];
            let more = if n > SHOWN { "..., " } else { "" };
            format!(
                "[{more}{}]",
                tail.iter()
                    .map(|e| format!("{e:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        match (holds, self.property.when) {
            (Ok(true), _) => Ok(()),
            (Err(_), _) => Err(format!(
                "property `{}` panicked on {}",
                self.property.name,
                shown()
            )),
            (Ok(false), When::Always) => Err(format!(
                "property `{}` broke at event {}: {}",
                self.property.name,
                self.events.len(),
                shown()
            )),
            (Ok(false), When::Eventually) => Err(format!(
                "property `{}` does not hold at the end: {}",
                self.property.name,
                shown()
            )),
        }
    }
}

impl<E: Clone + Debug> Invariant<Shown<E>> for Judge<E> {
    fn name(&self) -> &str {
        &self.property.name
    }

    fn observe(&mut self, event: &Shown<E>) -> Result<(), String> {
        self.events.push(event.0.clone());
        match self.property.when {
            When::Always => self.judge(),
            When::Eventually => Ok(()),
        }
    }

    fn at_quiescence(&mut self) -> Result<(), String> {
        match self.property.when {
            When::Always => Ok(()),
            When::Eventually => self.judge(),
        }
    }
}
