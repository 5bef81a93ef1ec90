//! `tokio::pin!`: pins values on the stack, shadowing each binding with its pinned reference.

/// Pins each named value (or `let` binding) on the stack, as `tokio::pin!`.
///
/// ```
/// use braid::tokio;
///
/// braid::check(|| async {
///     let fut = async { 2 };
///     tokio::pin!(fut);
///     assert_eq!((&mut fut).await, 2);
///     tokio::pin! {
///         let other = async { 3 };
///     }
///     assert_eq!(other.await, 3);
/// })
/// .assert_holds();
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __braid_tokio_pin {
    ($($x:ident),* $(,)?) => {
        $(
            let mut $x = $x;
            #[allow(unused_mut)]
            let mut $x = unsafe { ::core::pin::Pin::new_unchecked(&mut $x) };
        )*
    };
    ($(let $x:ident = $init:expr;)*) => {
        $(
            let $x = $init;
            $crate::__braid_tokio_pin!($x);
        )*
    };
}
