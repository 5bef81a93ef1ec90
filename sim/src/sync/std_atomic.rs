//! Atomics shaped like `std::sync::atomic`: plain synchronous `load(Ordering)`, `store`,
//! `fetch_add`, `compare_exchange`. At access grain each operation is a scheduling point in
//! the middle of a poll (the task is stackful: see `Model::stackful_tasks`), so a race between
//! two adjacent loads with no `.await` between them is found. Every ordering is treated as
//! `SeqCst`: braid explores interleavings, not weak-memory reorderings (loom's domain).

use std::fmt::Debug;
use std::sync::atomic::Ordering;

use crate::rt::op::{AtomicOp, ObjState, Op};
use crate::rt::sync_point::at_access_grain;
use crate::rt::{report_observed, report_value, with_exec};
use crate::vocab::AccessKind;
use crate::vocab::ObjId;

/// The engine object behind one atomic: named and registered with the run that created it.
struct Tracked {
    id: ObjId,
}

impl Tracked {
    fn new(name: crate::Name, value: &(impl std::hash::Hash + ?Sized)) -> Self {
        let id = with_exec(|ex| ex.add_object(name, ObjState::Atomic));
        report_value(id, value);
        Tracked { id }
    }

    /// The scheduling point before an operation, then its access; whether the step is traced.
    fn before(&self, op: AtomicOp) -> bool {
        if !crate::engine_running() {
            return false;
        }
        at_access_grain(Op::Atomic(self.id, op));
        let kind = match op {
            AtomicOp::Load => AccessKind::Read,
            _ => AccessKind::Write,
        };
        with_exec(|ex| {
            ex.access(self.id, kind);
            ex.keeps_trace()
        })
    }

    fn after<S, T>(&self, traced: bool, seen: &S, new: Option<&T>)
    where
        S: std::hash::Hash + Debug,
        T: std::hash::Hash + Debug,
    {
        if !crate::engine_running() {
            return;
        }
        report_observed(seen);
        if let Some(new) = new {
            report_value(self.id, new);
        }
        if traced {
            with_exec(|ex| {
                ex.note_effect(|| match new {
                    Some(new) => format!("{seen:?} -> {new:?}"),
                    None => format!("{seen:?}"),
                })
            });
        }
    }
}

macro_rules! std_atomic {
    ($(#[$doc:meta])* $name:ident, $std:ty, $t:ty, $kind:literal) => {
        $(#[$doc])*
        pub struct $name {
            value: $std,
            tracked: Tracked,
        }

        impl $name {
            #[doc = concat!("A new atomic, named `", $kind, "#1`, `", $kind, "#2`, ... in traces.")]
            pub fn new(value: $t) -> Self {
                Self::named(crate::sync::auto_name($kind), value)
            }

            /// A new atomic with a name of its own for traces.
            pub fn named(name: impl Into<crate::Name>, value: $t) -> Self {
                $name {
                    tracked: Tracked::new(name.into(), &value),
                    value: <$std>::new(value),
                }
            }

            /// Loads the value (a scheduling point at access grain).
            pub fn load(&self, _order: Ordering) -> $t {
                let traced = self.tracked.before(AtomicOp::Load);
                let v = self.value.load(Ordering::SeqCst);
                self.tracked.after(traced, &v, None::<&$t>);
                v
            }

            /// Stores a value (a scheduling point at access grain).
            pub fn store(&self, value: $t, _order: Ordering) {
                let traced = self.tracked.before(AtomicOp::Store);
                let prev = self.value.swap(value, Ordering::SeqCst);
                self.tracked.after(traced, &prev, Some(&value));
            }

            /// Stores a value and returns the previous one.
            pub fn swap(&self, value: $t, _order: Ordering) -> $t {
                let traced = self.tracked.before(AtomicOp::CompareExchange);
                let prev = self.value.swap(value, Ordering::SeqCst);
                self.tracked.after(traced, &prev, Some(&value));
                prev
            }

            /// Stores `new` if the value is `current`; the previous value either way.
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                _success: Ordering,
                _failure: Ordering,
            ) -> Result<$t, $t> {
                let traced = self.tracked.before(AtomicOp::CompareExchange);
                let result =
                    self.value.compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst);
                let changed = result.is_ok().then_some(&new);
                self.tracked.after(traced, &result, changed);
                result
            }

            /// As `compare_exchange` (it never fails spuriously here).
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.compare_exchange(current, new, success, failure)
            }

            /// Applies `f` until it takes effect, as std's: one scheduling point per attempt.
            pub fn fetch_update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: impl FnMut($t) -> Option<$t>,
            ) -> Result<$t, $t> {
                let mut prev = self.load(fetch_order);
                while let Some(next) = f(prev) {
                    match self.compare_exchange(prev, next, set_order, fetch_order) {
                        Ok(x) => return Ok(x),
                        Err(seen) => prev = seen,
                    }
                }
                Err(prev)
            }

            /// The value, without any scheduling (the atomic is owned: no one else can see it).
            pub fn into_inner(self) -> $t {
                self.value.into_inner()
            }

            /// The value, mutably (the atomic is borrowed exclusively: no one else can see it).
            pub fn get_mut(&mut self) -> &mut $t {
                self.value.get_mut()
            }

            fn rmw(&self, op: AtomicOp, f: impl Fn($t) -> $t) -> $t {
                let traced = self.tracked.before(op);
                let prev = self.value.load(Ordering::SeqCst);
                let new = f(prev);
                self.value.store(new, Ordering::SeqCst);
                self.tracked.after(traced, &prev, Some(&new));
                prev
            }
        }

        impl Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                Debug::fmt(&self.value, f)
            }
        }
    };
}

macro_rules! std_atomic_int {
    ($(#[$doc:meta])* $name:ident, $std:ty, $t:ty, $kind:literal) => {
        std_atomic!($(#[$doc])* $name, $std, $t, $kind);

        impl $name {
            /// Adds, wrapping on overflow as std's does; returns the previous value.
            pub fn fetch_add(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::FetchAdd, |v| v.wrapping_add(n))
            }

            /// Subtracts, wrapping on overflow as std's does; returns the previous value.
            pub fn fetch_sub(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::FetchSub, |v| v.wrapping_sub(n))
            }

            /// Bitwise and; returns the previous value.
            pub fn fetch_and(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::CompareExchange, |v| v & n)
            }

            /// Bitwise or; returns the previous value.
            pub fn fetch_or(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::CompareExchange, |v| v | n)
            }

            /// Bitwise xor; returns the previous value.
            pub fn fetch_xor(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::CompareExchange, |v| v ^ n)
            }

            /// Maximum; returns the previous value.
            pub fn fetch_max(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::CompareExchange, |v| v.max(n))
            }

            /// Minimum; returns the previous value.
            pub fn fetch_min(&self, n: $t, _order: Ordering) -> $t {
                self.rmw(AtomicOp::CompareExchange, |v| v.min(n))
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new(0)
            }
        }
    };
}

std_atomic!(
    /// `std::sync::atomic::AtomicBool`, each operation a scheduling point at access grain.
    AtomicBool, std::sync::atomic::AtomicBool, bool, "atomic_bool"
);

impl AtomicBool {
    /// Logical and; returns the previous value.
    pub fn fetch_and(&self, b: bool, _order: Ordering) -> bool {
        self.rmw(AtomicOp::CompareExchange, |v| v & b)
    }

    /// Logical or; returns the previous value.
    pub fn fetch_or(&self, b: bool, _order: Ordering) -> bool {
        self.rmw(AtomicOp::CompareExchange, |v| v | b)
    }

    /// Logical xor; returns the previous value.
    pub fn fetch_xor(&self, b: bool, _order: Ordering) -> bool {
        self.rmw(AtomicOp::CompareExchange, |v| v ^ b)
    }
}

impl Default for AtomicBool {
    fn default() -> Self {
        Self::new(false)
    }
}

std_atomic_int!(
    /// `std::sync::atomic::AtomicUsize`, each operation a scheduling point at access grain.
    AtomicUsize, std::sync::atomic::AtomicUsize, usize, "atomic_usize"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicIsize`, each operation a scheduling point at access grain.
    AtomicIsize, std::sync::atomic::AtomicIsize, isize, "atomic_isize"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicU8`, each operation a scheduling point at access grain.
    AtomicU8, std::sync::atomic::AtomicU8, u8, "atomic_u8"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicU16`, each operation a scheduling point at access grain.
    AtomicU16, std::sync::atomic::AtomicU16, u16, "atomic_u16"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicU32`, each operation a scheduling point at access grain.
    AtomicU32, std::sync::atomic::AtomicU32, u32, "atomic_u32"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicU64`, each operation a scheduling point at access grain.
    AtomicU64, std::sync::atomic::AtomicU64, u64, "atomic_u64"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicI32`, each operation a scheduling point at access grain.
    AtomicI32, std::sync::atomic::AtomicI32, i32, "atomic_i32"
);
std_atomic_int!(
    /// `std::sync::atomic::AtomicI64`, each operation a scheduling point at access grain.
    AtomicI64, std::sync::atomic::AtomicI64, i64, "atomic_i64"
);
