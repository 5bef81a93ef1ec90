//! The controlled executor: one execution per run, a baton that only one task holds, and the
//! bookkeeping that decides which task holds it next. Nothing here knows any model or strategy
//! beyond the `Scheduler` trait.

pub(crate) mod coroutine;
pub(crate) mod execution;
pub(crate) mod model_task;
pub(crate) mod op;
pub(crate) mod point;
pub(crate) mod run_cell;
pub(crate) mod state;
pub(crate) mod step_bound;
pub(crate) mod symmetry;
pub(crate) mod sync_point;
pub(crate) mod task;

use std::cell::{Cell, RefCell};

use crate::digest;
use crate::vocab::ObjId;

pub(crate) use execution::Execution;

thread_local! {
    /// The execution of the run in progress on this thread, or null. A plain pointer:
    /// primitives reach the execution several times per step, and a thread-local with no
    /// destructor is read without any lazy-initialisation check. `EnterGuard` borrows the
    /// execution for as long as the pointer is set.
    static CURRENT: Cell<*const RefCell<Execution>> = const { Cell::new(std::ptr::null()) };
    /// Whether the current run keeps values (`Execution::tracks_values`), readable without
    /// borrowing the execution: primitives ask on every operation, and most runs do not.
    static TRACKS_VALUES: Cell<bool> = const { Cell::new(false) };
    /// Whether the current run keeps a trace, readable without borrowing the execution: the
    /// model's marks (`sim::mark`) ask on every message, and only replays keep one.
    static KEEPS_TRACE: Cell<bool> = const { Cell::new(false) };
    /// The serial number of the run in progress (see `run_id`).
    static RUN_ID: Cell<u64> = const { Cell::new(0) };
}

/// The last serial number given to a run, on any thread.
static RUN_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether the run in progress keeps a trace.
#[inline]
pub(crate) fn keeps_trace() -> bool {
    KEEPS_TRACE.with(Cell::get)
}

/// Whether the run in progress keeps object values and task observations.
#[inline]
pub(crate) fn tracks_values() -> bool {
    TRACKS_VALUES.with(Cell::get)
}

/// The execution of the run in progress, if any.
#[inline]
fn current() -> Option<&'static RefCell<Execution>> {
    let exec = CURRENT.with(Cell::get);
    // SAFETY: a non-null pointer was set by `enter` from a reference that its `EnterGuard`
    // borrows, and the guard clears it when it drops, before that borrow ends. The reference
    // does not leave this module's helpers, each of which uses it within one call.
    unsafe { exec.as_ref() }
}

/// The identity of the run in progress on this thread, or 0: unique in the process (a serial
/// number, not the execution's address, which the next run may reuse).
#[inline]
pub(crate) fn run_id() -> u64 {
    RUN_ID.with(Cell::get)
}

/// Runs `f` on the execution of the run in progress on this thread.
///
/// # Panics
/// When no run is in progress: engine primitives only work inside a model started by the engine.
#[inline]
pub(crate) fn with_exec<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
    match current() {
        Some(exec) => f(&mut exec.borrow_mut()),
        None => outside_a_run(),
    }
}

/// A braid primitive used where no run is in progress, said in a user's terms.
#[cold]
#[track_caller]
fn outside_a_run() -> ! {
    panic!(
        "a braid primitive (braid::tokio, or tokio itself when it is braid-tokio built with \
         --cfg madsim) was used outside a braid run. Under --cfg madsim, tokio code runs only \
         inside a #[tokio::test] / #[braid::test] body or braid::check(..); in an ordinary \
         build (no --cfg madsim in RUSTFLAGS or .cargo/config.toml) braid-tokio is real tokio. \
         A model creates its primitives in Model::start. See the README, 'Check your tokio \
         crate'."
    )
}

/// Like `with_exec`, but does nothing when no run is in progress or the execution is busy
/// (a guard dropped while the runtime tears down, or while unwinding).
pub(crate) fn try_with_exec(f: impl FnOnce(&mut Execution)) {
    if let Some(exec) = current() {
        if let Ok(mut exec) = exec.try_borrow_mut() {
            f(&mut exec);
        }
    }
}

/// Whether a run is in progress on this thread.
pub(crate) fn in_run() -> bool {
    current().is_some()
}

/// Installs `exec` as this thread's current execution until the guard drops (the guard
/// borrows it, so it outlives the pointer).
pub(crate) fn enter(exec: &RefCell<Execution>) -> EnterGuard<'_> {
    TRACKS_VALUES.with(|t| t.set(exec.borrow().tracks_values()));
    KEEPS_TRACE.with(|t| t.set(exec.borrow().keeps_trace()));
    let serial = RUN_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    RUN_ID.with(|id| id.set(serial));
    CURRENT.with(|cur| cur.set(exec));
    EnterGuard {
        _exec: std::marker::PhantomData,
    }
}

/// Keeps the current execution borrowed while its pointer is installed.
pub(crate) struct EnterGuard<'a> {
    _exec: std::marker::PhantomData<&'a RefCell<Execution>>,
}

impl Drop for EnterGuard<'_> {
    fn drop(&mut self) {
        CURRENT.with(|cur| cur.set(std::ptr::null()));
        TRACKS_VALUES.with(|t| t.set(false));
        KEEPS_TRACE.with(|t| t.set(false));
        RUN_ID.with(|id| id.set(0));
    }
}

/// The running task learns `what` (see `state::ValueState`).
pub(crate) fn report_observed<T: std::hash::Hash + ?Sized>(what: &T) {
    if tracks_values() {
        with_exec(|ex| ex.observe(|| digest::of(what)));
    }
}

/// Reports `obj`'s new value, when the run keeps values (see `state::ValueState`). Safe to call
/// from a guard's drop (does nothing when no run is in progress).
pub(crate) fn report_value<T: std::hash::Hash + ?Sized>(obj: ObjId, value: &T) {
    if tracks_values() {
        try_with_exec(|ex| ex.set_value(obj, || digest::of(value)));
    }
}

/// Reports that `obj` changed to a value a search by state cannot compare: a digest no other
/// value in this process ever gets, so no two states that differ in it are taken as one.
pub(crate) fn report_opaque<T: ?Sized>(obj: ObjId, _value: &T) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    if tracks_values() {
        let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        try_with_exec(|ex| ex.set_value(obj, || digest::mix(u64::MAX, unique)));
    }
}
