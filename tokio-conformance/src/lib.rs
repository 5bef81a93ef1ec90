//! tokio's own integration tests, ported to braid's tokio facade (see the README).
//!
//! This library holds what the ported tests share: a [`tokio_test`] shim, tokio-test's
//! hand-polled mock tasks and assertion macros, so `use tokio_test::...` in a ported file works
//! once it names this module. The tests run inside a braid run (`#[braid::test]`), so every
//! primitive the mock tasks poll is an object of that run.

/// A small `tokio-test` (the crate tokio's tests use): a mock task polled by hand with a
/// counting waker, and the `assert_*!` macros.
pub mod tokio_test {
    pub use crate::{
        assert_elapsed, assert_err, assert_ok, assert_pending, assert_ready, assert_ready_eq,
        assert_ready_err, assert_ready_ok,
    };

    /// Mock tasks, as `tokio_test::task`.
    pub mod task {
        use std::future::Future;
        use std::ops;
        use std::pin::Pin;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        use std::task::{Context, Poll, Wake, Waker};

        /// The mock task's waker: it records whether it was woken.
        #[derive(Default)]
        struct Flag {
            woken: AtomicBool,
        }

        impl Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.woken.store(true, Ordering::SeqCst);
            }

            fn wake_by_ref(self: &Arc<Self>) {
                self.woken.store(true, Ordering::SeqCst);
            }
        }

        /// Wraps `task` in a mock task, polled by hand.
        pub fn spawn<T>(task: T) -> Spawn<T> {
            Spawn {
                flag: Arc::new(Flag::default()),
                future: Box::pin(task),
            }
        }

        /// A future (or anything) polled by hand, as `tokio_test::task::Spawn`.
        pub struct Spawn<T> {
            flag: Arc<Flag>,
            future: Pin<Box<T>>,
        }

        impl<T> Spawn<T> {
            /// The wrapped value.
            pub fn into_inner(self) -> T
            where
                T: Unpin,
            {
                *Pin::into_inner(self.future)
            }

            /// Whether the task was woken since it was last polled.
            pub fn is_woken(&self) -> bool {
                self.flag.woken.load(Ordering::SeqCst)
            }

            /// How many references to the task's waker exist, its own included (as tokio-test).
            pub fn waker_ref_count(&self) -> usize {
                Arc::strong_count(&self.flag)
            }

            /// Runs `f` with the task's context and the pinned value, clearing the woken flag
            /// first.
            pub fn enter<F, R>(&mut self, f: F) -> R
            where
                F: FnOnce(&mut Context<'_>, Pin<&mut T>) -> R,
            {
                self.flag.woken.store(false, Ordering::SeqCst);
                let waker = Waker::from(self.flag.clone());
                let mut cx = Context::from_waker(&waker);
                f(&mut cx, self.future.as_mut())
            }
        }

        impl<T: Future> Spawn<T> {
            /// Polls the future once with the mock task's waker.
            pub fn poll(&mut self) -> Poll<T::Output> {
                self.enter(|cx, f| f.poll(cx))
            }
        }

        impl<T: Unpin> ops::DerefMut for Spawn<T> {
            fn deref_mut(&mut self) -> &mut T {
                &mut self.future
            }
        }

        impl<T> ops::Deref for Spawn<T> {
            type Target = T;

            fn deref(&self) -> &T {
                &self.future
            }
        }
    }
}

/// Asserts that a `Poll` is `Ready`, giving its value.
#[macro_export]
macro_rules! assert_ready {
    ($e:expr) => {{
        use ::std::task::Poll::*;
        match $e {
            Ready(v) => v,
            Pending => panic!("pending"),
        }
    }};
    ($e:expr, $($msg:tt)+) => {{
        use ::std::task::Poll::*;
        match $e {
            Ready(v) => v,
            Pending => panic!("pending; {}", format_args!($($msg)+)),
        }
    }};
}

/// Asserts that a `Poll` is `Pending`. (Unlike tokio-test's, the message does not show the
/// ready value: some of the facade's guards and permits are not `Debug`.)
#[macro_export]
macro_rules! assert_pending {
    ($e:expr) => {{
        use ::std::task::Poll::*;
        match $e {
            Pending => {}
            Ready(_) => panic!("ready"),
        }
    }};
    ($e:expr, $($msg:tt)+) => {{
        use ::std::task::Poll::*;
        match $e {
            Pending => {}
            Ready(_) => panic!("ready; {}", format_args!($($msg)+)),
        }
    }};
}

/// Asserts that a `Poll` is `Ready(Ok(_))`, giving the value.
#[macro_export]
macro_rules! assert_ready_ok {
    ($e:expr) => {{
        $crate::assert_ok!($crate::assert_ready!($e))
    }};
    ($e:expr, $($msg:tt)+) => {{
        $crate::assert_ok!($crate::assert_ready!($e, $($msg)+), $($msg)+)
    }};
}

/// Asserts that a `Poll` is `Ready(Err(_))`, giving the error.
#[macro_export]
macro_rules! assert_ready_err {
    ($e:expr) => {{
        $crate::assert_err!($crate::assert_ready!($e))
    }};
    ($e:expr, $($msg:tt)+) => {{
        $crate::assert_err!($crate::assert_ready!($e, $($msg)+), $($msg)+)
    }};
}

/// Asserts that a `Poll` is `Ready` with a value equal to the second argument.
#[macro_export]
macro_rules! assert_ready_eq {
    ($e:expr, $expect:expr) => {
        let val = $crate::assert_ready!($e);
        assert_eq!(val, $expect)
    };
    ($e:expr, $expect:expr, $($msg:tt)+) => {
        let val = $crate::assert_ready!($e, $($msg)*);
        assert_eq!(val, $expect, $($msg)*)
    };
}

/// Asserts that a `Result` is `Ok`, giving the value.
#[macro_export]
macro_rules! assert_ok {
    ($e:expr) => {{
        match $e {
            Ok(v) => v,
            Err(e) => panic!("assertion failed: Err({:?})", e),
        }
    }};
    ($e:expr, $($msg:tt)+) => {{
        match $e {
            Ok(v) => v,
            Err(e) => panic!("assertion failed: Err({:?}): {}", e, format_args!($($msg)+)),
        }
    }};
}

/// Asserts that a `Result` is `Err`, giving the error.
#[macro_export]
macro_rules! assert_err {
    ($e:expr) => {{
        match $e {
            Ok(v) => panic!("assertion failed: Ok({:?})", v),
            Err(e) => e,
        }
    }};
    ($e:expr, $($msg:tt)+) => {{
        match $e {
            Ok(v) => panic!("assertion failed: Ok({:?}): {}", v, format_args!($($msg)+)),
            Err(e) => e,
        }
    }};
}

/// Asserts that at least `$d` of virtual time passed since `$now`, and less than 1 ms more.
#[macro_export]
macro_rules! assert_elapsed {
    ($now:expr, $d:expr) => {{
        let elapsed = $now.elapsed();
        let lower: ::std::time::Duration = $d;
        assert!(
            elapsed >= lower && elapsed <= lower + ::std::time::Duration::from_millis(1),
            "actual = {:?}, expected = {:?}",
            elapsed,
            lower
        );
    }};
}
