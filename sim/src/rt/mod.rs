//! The controlled executor: one execution per run, a baton that only one task holds, and the
//! bookkeeping that decides which task holds it next. Nothing here knows any model or strategy
//! beyond the `Strategy` trait.

pub(crate) mod access;
pub(crate) mod digest;
pub(crate) mod execution;
pub(crate) mod op;
pub(crate) mod state;
pub(crate) mod task;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

pub(crate) use execution::Execution;
pub use op::ObjId;
pub use task::TaskId;

thread_local! {
    static CURRENT: RefCell<Option<Rc<RefCell<Execution>>>> = const { RefCell::new(None) };
    /// Whether the current run keeps values (`Execution::tracks_values`), readable without
    /// borrowing the execution: primitives ask on every operation, and most runs do not.
    static TRACKS_VALUES: Cell<bool> = const { Cell::new(false) };
}

/// Whether the run in progress keeps object values and task observations.
pub(crate) fn tracks_values() -> bool {
    TRACKS_VALUES.with(Cell::get)
}

/// Runs `f` on the execution of the run in progress on this thread.
///
/// # Panics
/// When no run is in progress: engine primitives only work inside a model started by the engine.
pub(crate) fn with_exec<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
    CURRENT.with(|cur| {
        let cur = cur.borrow();
        let exec = cur
            .as_ref()
            .expect("braid primitive used outside a simulation run (create it in Model::start)");
        let mut exec = exec.borrow_mut();
        f(&mut exec)
    })
}

/// Like `with_exec`, but does nothing when no run is in progress or the execution is busy
/// (a guard dropped while the runtime tears down, or while unwinding).
pub(crate) fn try_with_exec(f: impl FnOnce(&mut Execution)) {
    CURRENT.with(|cur| {
        if let Some(exec) = cur.borrow().as_ref() {
            if let Ok(mut exec) = exec.try_borrow_mut() {
                f(&mut exec);
            }
        }
    })
}

/// Whether a run is in progress on this thread.
pub(crate) fn in_run() -> bool {
    CURRENT.with(|cur| cur.borrow().is_some())
}

/// Installs `exec` as this thread's current execution until the guard drops.
pub(crate) fn enter(exec: Rc<RefCell<Execution>>) -> EnterGuard {
    TRACKS_VALUES.with(|t| t.set(exec.borrow().tracks_values()));
    CURRENT.with(|cur| *cur.borrow_mut() = Some(exec));
    EnterGuard(())
}

pub(crate) struct EnterGuard(());

impl Drop for EnterGuard {
    fn drop(&mut self) {
        CURRENT.with(|cur| *cur.borrow_mut() = None);
        TRACKS_VALUES.with(|t| t.set(false));
    }
}

/// The running task learns `what` (see `state::ValueState`).
pub(crate) fn report_observed<T: std::hash::Hash + ?Sized>(what: &T) {
    if tracks_values() {
        with_exec(|ex| ex.observe(digest::of(what)));
    }
}

/// Reports `obj`'s new value, when the run keeps values (see `state::ValueState`). Safe to call
/// from a guard's drop (does nothing when no run is in progress).
pub(crate) fn report_value<T: std::hash::Hash + ?Sized>(obj: ObjId, value: &T) {
    if tracks_values() {
        try_with_exec(|ex| ex.set_value(obj, digest::of(value)));
    }
}
