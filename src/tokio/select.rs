//! `tokio::select!`: waits on several futures and runs the handler of the first to complete
//! whose output matches its pattern; the others are dropped (cancelled) before the handler runs.
//!
//! Which branch is polled first is, in tokio, random, drawn anew at every poll; here it is a
//! scheduling decision at every poll (the strategy picks the starting branch among those
//! enabled, recorded and replayed like any other choice), so a test explores every order in
//! which ready branches can win. `biased;`
//! polls in the order written, as tokio's. A branch whose output does not match its pattern,
//! or whose `, if` precondition is false, is disabled for the rest of the `select!`; with every
//! branch disabled the `else` branch runs (or, without one, it panics, as tokio's).
//!
//! Written with `macro_rules!` only: the branches get their names from a fixed list (64, as
//! tokio allows), and the pattern is tested by reference on the output before it is kept,
//! with `mut` and `ref` stripped from it (a binding by value would move out of the
//! reference).

use std::task::Poll;

/// Where a non-`biased` `select!` starts polling, at its first poll: the strategy's choice
/// among the enabled branches (no decision when at most one is enabled).
#[doc(hidden)]
pub async fn start(biased: bool, enabled: &[bool]) -> usize {
    let first = enabled.iter().position(|e| *e).unwrap_or(0);
    let count = enabled.iter().filter(|e| **e).count();
    if biased || count <= 1 {
        return first;
    }
    let pick = sim::choose(count).await;
    nth_enabled(enabled, pick).unwrap_or(first)
}

/// Where it starts at a later poll: tokio draws a new random start on every poll, so this is a
/// decision again (in a stackful task, which can decide mid-poll; otherwise `previous`).
/// `Pending` when the task is being finished after its run: the poll returns at once.
#[doc(hidden)]
pub fn restart(biased: bool, enabled: &[bool], previous: usize) -> Poll<usize> {
    let first = enabled.iter().position(|e| *e).unwrap_or(0);
    let count = enabled.iter().filter(|e| **e).count();
    if biased || count <= 1 {
        return Poll::Ready(first);
    }
    sim::choose_in_poll(count).map(|pick| match pick {
        Some(pick) => nth_enabled(enabled, pick).unwrap_or(first),
        None => previous,
    })
}

/// The index of the `pick`th enabled branch.
fn nth_enabled(enabled: &[bool], pick: usize) -> Option<usize> {
    enabled
        .iter()
        .enumerate()
        .filter(|(_, e)| **e)
        .nth(pick)
        .map(|(i, _)| i)
}

/// Waits on several futures at once, as `tokio::select!` (see [`braid::tokio`](crate::tokio)).
///
/// ```
/// use std::time::Duration;
/// use braid::tokio::{self, sync::oneshot, time};
///
/// braid::check(|| async {
///     let (tx, rx) = oneshot::channel::<u32>();
///     tokio::spawn(async move {
///         time::sleep(Duration::from_millis(5)).await;
///         let _ = tx.send(7);
///     });
///     let got = tokio::select! {
///         v = rx => v.ok(),
///         _ = time::sleep(Duration::from_millis(50)) => None,
///     };
///     // On a paused clock the reply at 5 ms always wins; with the default clock jump, the
///     // 50 ms deadline may fire first while the replier is slow.
///     assert_eq!(got, Some(7));
/// })
/// .clock_jumps(0)
/// .assert_holds();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __braid_tokio_select {
    (biased; $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@ids true; $($rest)*)
    };
    (@ids $b:tt; $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@branch $b; []; [
            (0 _0 T0) (1 _1 T1) (2 _2 T2) (3 _3 T3) (4 _4 T4) (5 _5 T5) (6 _6 T6) (7 _7 T7)
            (8 _8 T8) (9 _9 T9) (10 _10 T10) (11 _11 T11) (12 _12 T12) (13 _13 T13)
            (14 _14 T14) (15 _15 T15) (16 _16 T16) (17 _17 T17) (18 _18 T18) (19 _19 T19)
            (20 _20 T20) (21 _21 T21) (22 _22 T22) (23 _23 T23) (24 _24 T24) (25 _25 T25)
            (26 _26 T26) (27 _27 T27) (28 _28 T28) (29 _29 T29) (30 _30 T30) (31 _31 T31)
            (32 _32 T32) (33 _33 T33) (34 _34 T34) (35 _35 T35) (36 _36 T36) (37 _37 T37)
            (38 _38 T38) (39 _39 T39) (40 _40 T40) (41 _41 T41) (42 _42 T42) (43 _43 T43)
            (44 _44 T44) (45 _45 T45) (46 _46 T46) (47 _47 T47) (48 _48 T48) (49 _49 T49)
            (50 _50 T50) (51 _51 T51) (52 _52 T52) (53 _53 T53) (54 _54 T54) (55 _55 T55)
            (56 _56 T56) (57 _57 T57) (58 _58 T58) (59 _59 T59) (60 _60 T60) (61 _61 T61)
            (62 _62 T62) (63 _63 T63)
        ]; []; $($rest)*)
    };

    // The end: no `else`.
    (@branch $b:tt; [$($br:tt)*]; [$($ids:tt)*]; []; ) => {
        $crate::__braid_tokio_select!(@emit $b; [$($br)*]; {
            ::core::panic!("all branches are disabled and there is no else branch")
        })
    };
    (@branch $b:tt; [$($br:tt)*]; [$($ids:tt)*]; []; else => $e:expr $(,)?) => {
        $crate::__braid_tokio_select!(@emit $b; [$($br)*]; { $e })
    };
    // A branch's pattern is complete at its `=`.
    // A block handler, with or without a comma after it (two arms: `$(,)? $($rest:tt)*`
    // would be ambiguous when a comma follows).
    (@branch $b:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; [$($p:tt)+];
        = $f:expr, if $c:expr => $h:block, $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)* [$id [$($p)+] ($f) ($c) ($h)]];
            [$($ids)*]; []; $($rest)*)
    };
    (@branch $b:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; [$($p:tt)+];
        = $f:expr, if $c:expr => $h:block $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)* [$id [$($p)+] ($f) ($c) ($h)]];
            [$($ids)*]; []; $($rest)*)
    };
    (@branch $b:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; [$($p:tt)+];
        = $f:expr, if $c:expr => $h:expr $(, $($rest:tt)*)?) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)* [$id [$($p)+] ($f) ($c) ($h)]];
            [$($ids)*]; []; $($($rest)*)?)
    };
    (@branch $b:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; [$($p:tt)+];
        = $f:expr => $h:block, $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)* [$id [$($p)+] ($f) (true) ($h)]];
            [$($ids)*]; []; $($rest)*)
    };
    (@branch $b:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; [$($p:tt)+];
        = $f:expr => $h:block $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)* [$id [$($p)+] ($f) (true) ($h)]];
            [$($ids)*]; []; $($rest)*)
    };
    (@branch $b:tt; [$($br:tt)*]; [$id:tt $($ids:tt)*]; [$($p:tt)+];
        = $f:expr => $h:expr $(, $($rest:tt)*)?) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)* [$id [$($p)+] ($f) (true) ($h)]];
            [$($ids)*]; []; $($($rest)*)?)
    };
    // One more token of the pattern.
    (@branch $b:tt; [$($br:tt)*]; [$($ids:tt)*]; [$($p:tt)*]; $t:tt $($rest:tt)*) => {
        $crate::__braid_tokio_select!(@branch $b; [$($br)*]; [$($ids)*]; [$($p)* $t]; $($rest)*)
    };

    (@emit $b:tt; [$( [($idx:tt $var:ident $ty:ident) [$($p:tt)+] ($f:expr) ($c:expr) ($h:expr)] )*];
        $else:block) => {{
        #[allow(non_camel_case_types)]
        enum __BraidSelectOut<$($ty,)*> {
            $($var($ty),)*
            Disabled,
        }
        // Preconditions first, then every future (a disabled branch's too, never polled).
        let mut __enabled = [$($c),*];
        // `mut`: a `ref mut` binding in a winning pattern borrows the output mutably.
        #[allow(unused_mut)]
        let mut __output = {
            $(
                let mut $var = ::core::pin::pin!(::core::future::IntoFuture::into_future($f));
            )*
            let mut __start = $crate::tokio::__select_start($b, &__enabled).await;
            let mut __polled = false;
            ::core::future::poll_fn(|__cx| {
                // As tokio's: no branch is polled once the task's budget is spent.
                ::core::task::ready!($crate::tokio::__poll_budget_available(__cx));
                if ::core::mem::replace(&mut __polled, true) {
                    __start = ::core::task::ready!($crate::tokio::__select_restart(
                        $b, &__enabled, __start,
                    ));
                }
                let __n = __enabled.len();
                for __i in 0..__n {
                    let __branch = (__start + __i) % __n;
                    $(
                        if __branch == $idx && __enabled[$idx] {
                            if let ::core::task::Poll::Ready(__out) =
                                ::core::future::Future::poll($var.as_mut(), __cx)
                            {
                                __enabled[$idx] = false;
                                #[allow(unused_variables, unreachable_patterns)]
                                let __matched = match &__out {
                                    $crate::__braid_clean_pattern!($($p)+) => true,
                                    _ => false,
                                };
                                if __matched {
                                    return ::core::task::Poll::Ready(
                                        __BraidSelectOut::$var(__out),
                                    );
                                }
                            }
                        }
                    )*
                }
                if __enabled.iter().any(|__e| *__e) {
                    ::core::task::Poll::Pending
                } else {
                    ::core::task::Poll::Ready(__BraidSelectOut::Disabled)
                }
            })
            .await
            // The futures are dropped here: the losers are cancelled before any handler runs.
        };
        #[allow(unreachable_patterns)]
        match __output {
            $(__BraidSelectOut::$var($($p)+) => $h,)*
            __BraidSelectOut::Disabled => $else,
            _ => ::core::unreachable!("the winning output matched its pattern"),
        }
    }};

    (@branch $($rest:tt)*) => {
        ::core::compile_error!("select!: expected `pattern = future => handler` branches (at most 64), then an optional `else => expression`")
    };
    ($($rest:tt)*) => {
        $crate::__braid_tokio_select!(@ids false; $($rest)*)
    };
}

/// A pattern with its `mut` and `ref` removed, at any depth, for testing it by reference.
#[doc(hidden)]
#[macro_export]
macro_rules! __braid_clean_pattern {
    (@ [$($done:tt)*] []) => { $($done)* };
    (@ [$($done:tt)*] [(paren [$($pd:tt)*] [$($pr:tt)*]) $($stack:tt)*]) => {
        $crate::__braid_clean_pattern!(@ [$($pd)* ($($done)*)] [$($stack)*] $($pr)*)
    };
    (@ [$($done:tt)*] [(bracket [$($pd:tt)*] [$($pr:tt)*]) $($stack:tt)*]) => {
        $crate::__braid_clean_pattern!(@ [$($pd)* [$($done)*]] [$($stack)*] $($pr)*)
    };
    (@ [$($done:tt)*] [(brace [$($pd:tt)*] [$($pr:tt)*]) $($stack:tt)*]) => {
        $crate::__braid_clean_pattern!(@ [$($pd)* {$($done)*}] [$($stack)*] $($pr)*)
    };
    (@ [$($done:tt)*] [$($stack:tt)*] mut $($rest:tt)*) => {
        $crate::__braid_clean_pattern!(@ [$($done)*] [$($stack)*] $($rest)*)
    };
    (@ [$($done:tt)*] [$($stack:tt)*] ref $($rest:tt)*) => {
        $crate::__braid_clean_pattern!(@ [$($done)*] [$($stack)*] $($rest)*)
    };
    (@ [$($done:tt)*] [$($stack:tt)*] ($($inner:tt)*) $($rest:tt)*) => {
        $crate::__braid_clean_pattern!(@ [] [(paren [$($done)*] [$($rest)*]) $($stack)*] $($inner)*)
    };
    (@ [$($done:tt)*] [$($stack:tt)*] [$($inner:tt)*] $($rest:tt)*) => {
        $crate::__braid_clean_pattern!(@ [] [(bracket [$($done)*] [$($rest)*]) $($stack)*] $($inner)*)
    };
    (@ [$($done:tt)*] [$($stack:tt)*] {$($inner:tt)*} $($rest:tt)*) => {
        $crate::__braid_clean_pattern!(@ [] [(brace [$($done)*] [$($rest)*]) $($stack)*] $($inner)*)
    };
    (@ [$($done:tt)*] [$($stack:tt)*] $t:tt $($rest:tt)*) => {
        $crate::__braid_clean_pattern!(@ [$($done)* $t] [$($stack)*] $($rest)*)
    };
    ($($p:tt)+) => {
        $crate::__braid_clean_pattern!(@ [] [] $($p)+)
    };
}

#[cfg(test)]
mod tests {
    use crate::tokio::{self, sync::oneshot};

    /// tokio's syntax: block handlers followed by a comma, the last one too.
    #[test]
    fn block_handlers_with_commas() {
        crate::check(|| async {
            let (tx, rx) = oneshot::channel::<u32>();
            tx.send(4).unwrap();
            let got = tokio::select! {
                biased;
                v = rx => { v.unwrap() },
                _ = std::future::pending::<()>(), if false => { 0 },
                _ = std::future::pending::<()>() => { 1 },
            };
            assert_eq!(got, 4);
        })
        .assert_holds();
    }

    /// tokio's syntax: a `ref mut` binding in a branch's pattern.
    #[test]
    fn ref_mut_pattern() {
        crate::check(|| async {
            let got = tokio::select! {
                Some(ref mut s) = async { Some(String::from("a")) } => {
                    s.push('b');
                    s.clone()
                },
            };
            assert_eq!(got, "ab");
        })
        .assert_holds();
    }
}
