//! Invariants judge a model's history: as each event happens, and once more at quiescence.
//! The generic checkers here are composed by models, which map their own events onto them.

mod delivered;
mod duplicate;
mod fifo;

pub use delivered::EventuallyDelivered;
pub use duplicate::NoDuplicate;
pub use fifo::FifoPerKey;

/// A named property of every run.
pub trait Invariant<E> {
    /// The invariant's name, as violations and reports give it.
    fn name(&self) -> &str;

    /// Judges one event, in history order. `Err` carries the message of the violation.
    fn observe(&mut self, event: &E) -> Result<(), String>;

    /// The keys of the frames the last violation is about (as the model marks them, see
    /// `sim::mark`), for the pictures to highlight. Only asked when a trace is kept, and never
    /// part of the violation a replay file records.
    fn about(&self) -> Vec<String> {
        Vec::new()
    }

    /// Judges the end state, once no task can run.
    fn at_quiescence(&mut self) -> Result<(), String> {
        Ok(())
    }
}
