//! `tokio::join!` and `tokio::try_join!`: run several futures concurrently in the current task
//! until all complete (or, for `try_join!`, one fails).
//!
//! As tokio's, each poll of the joined future polls every unfinished branch, starting one
//! branch further along each time (so a branch that is always ready cannot starve the
//! others), or in the order written with `biased;`. Nothing here is a scheduling point of its
//! own: the branches are one task, and their operations are the points.
//!
//! Written with `macro_rules!` only: the branches get their names from a fixed list (64).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A branch of `join!`: its future, then its output until the join takes it.
#[doc(hidden)]
pub enum MaybeDone<F: Future> {
    Future(F),
    Done(F::Output),
    Gone,
}

impl<F: Future> MaybeDone<F> {
    /// Polls the future if it has not finished; whether it has now.
    pub fn poll_done(self: Pin<&mut Self>, cx: &mut Context<'_>) -> bool {
        // SAFETY: the future is never moved out while pinned; it is replaced in place.
        let this = unsafe { self.get_unchecked_mut() };
        match this {
            MaybeDone::Future(f) => {
                let f = unsafe { Pin::new_unchecked(f) };
                match f.poll(cx) {
                    Poll::Ready(out) => {
                        *this = MaybeDone::Done(out);
                        true
                    }
                    Poll::Pending => false,
                }
            }
            _ => true,
        }
    }

    /// The output, taken.
    pub fn take(self: Pin<&mut Self>) -> F::Output {
        // SAFETY: only a finished branch's output is moved; its future is already dropped.
        let this = unsafe { self.get_unchecked_mut() };
        match std::mem::replace(this, MaybeDone::Gone) {
            MaybeDone::Done(out) => out,
            _ => unreachable!("join!: a branch's output is taken once, when it has finished"),
        }
    }

    /// Whether the finished branch's output is an error (for `try_join!`).
    pub fn is_err(self: Pin<&mut Self>) -> bool
    where
        F::Output: TryOutput,
    {
        matches!(&*self, MaybeDone::Done(out) if out.is_err())
    }
}

/// A `Result`, as `try_join!` sees its branches' outputs.
#[doc(hidden)]
pub trait TryOutput {
    type Ok;
    type Err;
    fn is_err(&self) -> bool;
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> TryOutput for Result<T, E> {
    type Ok = T;
    type Err = E;

    fn is_err(&self) -> bool {
        Result::is_err(self)
    }

    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// The branch polled `i`-th in a poll that starts at `start`, of `n` (a function, so that
/// clippy does not flag `% 1` in a one-branch `join!`).
#[doc(hidden)]
pub fn rotate(start: usize, i: usize, n: usize) -> usize {
    match n {
        0 => 0,
        n => (start + i) % n,
    }
}

/// `n`, through a function (an empty `0..0` in a zero-branch `join!` is not a lint).
#[doc(hidden)]
pub fn count(n: usize) -> usize {
    n
}

/// Wraps a branch.
#[doc(hidden)]
pub fn maybe_done<F: std::future::IntoFuture>(f: F) -> MaybeDone<F::IntoFuture> {
    MaybeDone::Future(f.into_future())
}

/// Waits on several futures concurrently until all complete, as `tokio::join!`.
///
/// ```
/// use braid::tokio::{self, sync::oneshot};
///
/// braid::check(|| async {
///     let (tx, rx) = oneshot::channel::<u32>();
///     let (got, ()) = tokio::join!(async { rx.await.unwrap() }, async {
///         tx.send(3).unwrap();
///     });
///     assert_eq!(got, 3);
/// })
/// .assert_holds();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __braid_tokio_join {
    (@ids $b:tt; $try:tt; $($rest:tt)*) => {
        $crate::__braid_tokio_join!(@branch $b; $try; []; [
            (0 _0) (1 _1) (2 _2) (3 _3) (4 _4) (5 _5) (6 _6) (7 _7) (8 _8) (9 _9) (10 _10)
            (11 _11) (12 _12) (13 _13) (14 _14) (15 _15) (16 _16) (17 _17) (18 _18) (19 _19)
            (20 _20) (21 _21) (22 _22) (23 _23) (24 _24) (25 _25) (26 _26) (27 _27) (28 _28)
            (29 _29) (30 _30) (31 _31) (32 _32) (33 _33) (34 _34) (35 _35) (36 _36) (37 _37)
            (38 _38) (39 _39) (40 _40) (41 _41) (42 _42) (43 _43) (44 _44) (45 _45) (46 _46)
            (47 _47) (48 _48) (49 _49) (50 _50) (51 _51) (52 _52) (53 _53) (54 _54) (55 _55)
            (56 _56) (57 _57) (58 _58) (59 _59) (60 _60) (61 _61) (62 _62) (63 _63)
        ]; $($rest)*)
    };
    (@branch $b:tt; $try:tt; [$($br:tt)*]; [$($ids:tt)*]; ) => {
        $crate::__braid_tokio_join!(@emit $b; $try; [$($br)*])
    };
    (@branch $b:tt; $try:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; $f:expr $(, $($rest:tt)*)?) => {
        $crate::__braid_tokio_join!(@branch $b; $try; [$($br)* [$id ($f)]]; [$($ids)*]; $($($rest)*)?)
    };
    (@emit $b:tt; false; [$( [($idx:tt $var:ident) ($f:expr)] )*]) => {{
        $(
            let mut $var = ::core::pin::pin!($crate::tokio::__join_private::maybe_done($f));
        )*
        let mut __start: usize = 0;
        ::core::future::poll_fn(move |__cx| {
            const __N: usize = $crate::__braid_tokio_join!(@count $($idx)*);
            let mut __all = true;
            for __i in 0..$crate::tokio::__join_private::count(__N) {
                let __branch = $crate::tokio::__join_private::rotate(__start, __i, __N);
                $(
                    if __branch == $idx && !$var.as_mut().poll_done(__cx) {
                        __all = false;
                    }
                )*
            }
            if !$b {
                __start = $crate::tokio::__join_private::rotate(__start, 1, __N);
            }
            if !__all {
                return ::core::task::Poll::Pending;
            }
            ::core::task::Poll::Ready(($($var.as_mut().take(),)*))
        })
        .await
    }};
    (@emit $b:tt; true; [$( [($idx:tt $var:ident) ($f:expr)] )*]) => {{
        $(
            let mut $var = ::core::pin::pin!($crate::tokio::__join_private::maybe_done($f));
        )*
        let mut __start: usize = 0;
        ::core::future::poll_fn(move |__cx| {
            const __N: usize = $crate::__braid_tokio_join!(@count $($idx)*);
            let mut __all = true;
            for __i in 0..$crate::tokio::__join_private::count(__N) {
                let __branch = $crate::tokio::__join_private::rotate(__start, __i, __N);
                $(
                    if __branch == $idx {
                        if !$var.as_mut().poll_done(__cx) {
                            __all = false;
                        } else if $var.as_mut().is_err() {
                            let __e = $crate::tokio::__join_private::TryOutput::into_result(
                                $var.as_mut().take(),
                            );
                            return ::core::task::Poll::Ready(::core::result::Result::Err(
                                match __e {
                                    ::core::result::Result::Err(__e) => __e,
                                    ::core::result::Result::Ok(_) => ::core::unreachable!(),
                                },
                            ));
                        }
                    }
                )*
            }
            if !$b {
                __start = $crate::tokio::__join_private::rotate(__start, 1, __N);
            }
            if !__all {
                return ::core::task::Poll::Pending;
            }
            ::core::task::Poll::Ready(::core::result::Result::Ok(($(
                match $crate::tokio::__join_private::TryOutput::into_result($var.as_mut().take()) {
                    ::core::result::Result::Ok(__v) => __v,
                    ::core::result::Result::Err(_) => ::core::unreachable!(),
                },
            )*)))
        })
        .await
    }};
    (@count) => { 0usize };
    (@count $head:tt $($tail:tt)*) => { 1usize + $crate::__braid_tokio_join!(@count $($tail)*) };
    (biased; $($rest:tt)*) => {
        $crate::__braid_tokio_join!(@ids true; false; $($rest)*)
    };
    ($($rest:tt)*) => {
        $crate::__braid_tokio_join!(@ids false; false; $($rest)*)
    };
}

/// Waits on several futures returning `Result` until all succeed or one fails (the others
/// are then dropped), as `tokio::try_join!`.
///
/// ```
/// use braid::tokio;
///
/// braid::check(|| async {
///     let ok: Result<(u32, u32), &str> = tokio::try_join!(async { Ok(1) }, async { Ok(2) });
///     assert_eq!(ok, Ok((1, 2)));
///     let err: Result<(u32, u32), &str> =
///         tokio::try_join!(async { Ok(1) }, async { Err("no") });
///     assert_eq!(err, Err("no"));
/// })
/// .assert_holds();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __braid_tokio_try_join {
    (biased; $($rest:tt)*) => {
        $crate::__braid_tokio_join!(@ids true; true; $($rest)*)
    };
    ($($rest:tt)*) => {
        $crate::__braid_tokio_join!(@ids false; true; $($rest)*)
    };
}
