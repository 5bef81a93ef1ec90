//! loom's own model tests (loom 0.7.3's `tests/`, read from the crate as the cargo registry
//! serves it), ported as braid user tests (issue 30, item 2). Each port keeps loom's threads
//! (as tasks), operations and assertions (the bodies are in `loom_ports/bodies.rs`, shared
//! with `peers/src/bin/loom_tests.rs`, which times them against loom's originals) and is
//! searched exhaustively by unbounded DFS with the default reduction (visited states): a test
//! loom expects to pass must come out `Holds` with `exhaustive: true`, a proof; one that is
//! `#[should_panic]` in loom must come out `Failed`.
//!
//! braid takes every atomic ordering as SeqCst (it explores interleavings, not weak memory).
//! A test is ported where loom's assertion is about a property SeqCst also gives; the body
//! says so where loom's original used weaker orderings. A test whose point is a weak-memory
//! outcome, loom's `UnsafeCell` causality checking, its leak checking, or an API braid does not
//! have is not ported; each is listed below with the reason.
//!
//! Every loom test file and test:
//!
//! - `arc.rs` (loom's `Arc`, with leak tracking): none ported. `basic_usage` and
//!   `sync_in_drop` check `UnsafeCell` causality (no causality checking in braid);
//!   `detect_mem_leak` (`should_panic`) is loom's leak detection of its own `Arc`;
//!   `try_unwrap_succeeds`, `try_unwrap_fails` and `try_unwrap_multithreaded` test loom's `Arc`
//!   itself (braid has no modelled `Arc`: a std `Arc`'s count is not something braid sees),
//!   the last with loom's `Notify` (`wait`/`notify`).
//! - `atomic.rs`: `fetch_add_atomic` ported. Not ported: `lazy_static_arc_shutdown`
//!   (`should_panic`), `lazy_static_arc_race`, `lazy_static_arc_doesnt_leak`,
//!   `legal_load_after_lazy_static` (loom's `lazy_static!` and `thread_local!`);
//!   `invalid_unsync_load_relaxed` (`should_panic`; loom's `unsync_load` race check);
//!   `compare_and_swap_reads_old_values` (`#[ignore]` in loom, a weak-memory outcome);
//!   `update_atomic` (loom's own `AtomicUsize::update`, one RMW; braid's atomics are std's API,
//!   whose `fetch_update` is a load and a CAS loop, a different sequence of operations).
//! - `atomic_int.rs`: `xor`, `max`, `min`, `compare_exchange` and `fetch_update` ported for
//!   `AtomicU8`, `U16`, `U32`, `Usize`, `I32`, `Isize`, `U64`, `I64`. Not ported: the `i8` and
//!   `i16` modules (braid has no `AtomicI8`, `AtomicI16`); `try_update` and `update` (loom's own
//!   API, not std's); `compare_exchange_weak` (`#[ignore]` in loom).
//! - `atomic_relaxed.rs`: `compare_and_swap` (as `compare_exchange(..).unwrap_or_else(|x| x)`,
//!   std's definition of the deprecated call) and `check_ordering_valid` ported. Not ported:
//!   `check_ordering_invalid_1` and `_2` (`should_panic` on a reordering only weak memory
//!   allows; under SeqCst they hold).
//! - `condvar.rs`: `notify_one`, `notify_all` not ported (braid has no `Condvar`).
//! - `deadlock.rs`: `two_mutexes_deadlock` (`should_panic`) ported: `Failed`.
//! - `double_panic_in_drop.rs`: `double_panic_at_branch_max` (`should_panic`) not ported: it
//!   tests loom's `max_branches` limit and a panic in loom's `Arc` drop.
//! - `fence.rs`: `fence_sw_base`, `fence_sw_collapsed_store`, `fence_sw_collapsed_load`,
//!   `sb_fences`, `fence_hazard_pointer`, `rwc_syncs`, `w_rwc` not ported (fences and weak
//!   memory; braid has no `fence`).
//! - `futures.rs`: `atomic_waker_valid`, `spurious_poll` not ported (loom's `AtomicWaker` and
//!   `block_on` executor).
//! - `litmus.rs`: not ported: `store_buffering` asserts the weak outcome (0, 0) is seen, which
//!   SeqCst forbids; `load_buffering` is `#[ignore]` in loom (weak memory).
//! - `mpsc.rs` (std's `mpsc::channel`, as tokio's `unbounded_channel`): all ported:
//!   `basic_sequential_usage`, `basic_parallel_usage`, `commutative_senders`,
//!   `non_commutative_senders1` and `2` (`should_panic`: `Failed`), `drop_receiver`.
//! - `mutex.rs`: `mutex_enforces_mutual_exclusion` ported. Not ported: `mutex_establishes_seq_cst`
//!   (`UnsafeCell` causality), `mutex_into_inner` (`braid::std::sync::Mutex` has no
//!   `into_inner`).
//! - `rwlock.rs` (std's `RwLock`, as `braid::tokio::sync::RwLock`: `read().await`, no
//!   poisoning, so no `unwrap` on a guard; tokio's lock is write-preferring, std's unspecified,
//!   which none of these tests depends on): all ported: `rwlock_read_one`,
//!   `rwlock_read_two_write_one`, `rwlock_write_three`, `rwlock_write_then_try_write`,
//!   `rwlock_write_then_try_read`, `rwlock_read_then_try_write`, `rwlock_try_read`,
//!   `rwlock_write`, `rwlock_try_write`, `rwlock_into_inner`.
//! - `rwlock_regression1.rs`: `rwlock_two_writers` ported.
//! - `smoke.rs`: `checks_fail` (`should_panic`) ported: `Failed`. Not ported: `basic_usage`,
//!   `sync_in_drop` (`UnsafeCell` causality), `detect_mem_leak` (loom's leak detection).
//! - `spec.rs`: `test_seq_cst` ported (`#[ignore]` in loom, which fails it: loom runs a
//!   permutation SeqCst forbids; braid proves `z != 0` and sees exactly {1, 2}). Not ported:
//!   `relaxed` (`#[ignore]`, weak memory), `acq_rel` (asserts the weak outcome `z == 0` is
//!   seen, which SeqCst forbids).
//! - `thread_api.rs`: `many_joins`, `alt_join` ported. Not ported: `initial_thread`,
//!   `threads_have_unique_ids`, `thread_names`, `thread_stack_size`, `park_unpark_loom`,
//!   `park_unpark_std` (thread ids, names, `Builder`, park/unpark: braid has no
//!   `std::thread`).
//! - `thread_local.rs`: `thread_local`, `nested_with`, `drop` not ported (loom's
//!   `thread_local!`).
//! - `unsafe_cell.rs`: none ported (`atomic_causality_success`, `atomic_causality_fail`, the
//!   `unsafe_cell_race_*`, `unsafe_cell_ok_*`, `unsafe_cell_access_after_sync`): loom's
//!   `UnsafeCell` access checking, which braid does not have.
//!
//! `yield.rs`: `yield_completes` ported.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use braid::engine::strategy::Reduction;
use braid::{Outcome, Strategy};

#[path = "loom_ports/bodies.rs"]
mod bodies;

/// Unbounded DFS with the default reduction and no run budget: the proof a user asks for with
/// `strategy = "dfs"` (a budget would bring deepening levels, every schedule within 0, 1, 2
/// ... preemptions first, which a proof does not need).
fn search<F, Fut>(body: F) -> braid::Report
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    braid::check(body)
        .strategy(Strategy::Dfs {
            preemption_bound: None,
            reduction: Reduction::VisitedStates,
        })
        .run()
}

/// The test is proved: every schedule explored, none failed. The runs it took.
fn prove<F, Fut>(body: F) -> u64
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    match search(body).outcome {
        Outcome::Holds {
            runs,
            exhaustive: true,
            ..
        } => runs,
        other => panic!("expected a proof, got {other:?}"),
    }
}

/// loom's `#[should_panic]`: a schedule fails.
fn refute<F, Fut>(body: F) -> String
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    match search(body).outcome {
        Outcome::Failed(f) => f.message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

macro_rules! proved {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                prove(bodies::$name);
            }
        )*
    };
}

// atomic.rs
proved!(fetch_add_atomic);

// atomic_int.rs
macro_rules! proved_int {
    ($($module:ident),*) => {
        $(
            mod $module {
                use super::{bodies, prove};

                #[test]
                fn xor() {
                    prove(bodies::$module::xor);
                }

                #[test]
                fn max() {
                    prove(bodies::$module::max);
                }

                #[test]
                fn min() {
                    prove(bodies::$module::min);
                }

                #[test]
                fn compare_exchange() {
                    prove(bodies::$module::compare_exchange);
                }

                #[test]
                fn fetch_update() {
                    prove(bodies::$module::fetch_update);
                }
            }
        )*
    };
}

proved_int!(
    atomic_u8,
    atomic_u16,
    atomic_u32,
    atomic_usize,
    atomic_i32,
    atomic_isize,
    atomic_u64,
    atomic_i64
);

// atomic_relaxed.rs
proved!(compare_and_swap, check_ordering_valid);

// deadlock.rs
#[test]
fn two_mutexes_deadlock() {
    let message = refute(bodies::two_mutexes_deadlock);
    assert!(message.contains("no task can run"), "{message}");
}

// mutex.rs
proved!(mutex_enforces_mutual_exclusion);

// rwlock.rs
proved!(
    rwlock_read_one,
    rwlock_read_two_write_one,
    rwlock_write_three,
    rwlock_write_then_try_write,
    rwlock_write_then_try_read,
    rwlock_read_then_try_write,
    rwlock_try_read,
    rwlock_write,
    rwlock_try_write,
    rwlock_into_inner,
);

// rwlock_regression1.rs
proved!(rwlock_two_writers);

// yield.rs
proved!(yield_completes);

// smoke.rs
#[test]
fn checks_fail() {
    let message = refute(bodies::checks_fail);
    assert!(message.contains("assertion"), "{message}");
}

// mpsc.rs
proved!(
    basic_sequential_usage,
    basic_parallel_usage,
    commutative_senders,
    drop_receiver
);

#[test]
fn non_commutative_senders1() {
    let message = refute(bodies::non_commutative_senders1);
    assert!(message.contains("assertion"), "{message}");
}

#[test]
fn non_commutative_senders2() {
    let message = refute(bodies::non_commutative_senders2);
    assert!(message.contains("assertion"), "{message}");
}

// thread_api.rs
proved!(many_joins, alt_join);

// spec.rs
#[test]
fn test_seq_cst() {
    let seen = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let s = seen.clone();
    prove(move || bodies::test_seq_cst(s.clone()));
    let seen = seen.lock().unwrap();
    assert_eq!(*seen, HashSet::from([1, 2]));
}
