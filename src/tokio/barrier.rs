//! `tokio::sync::Barrier`: `n` tasks wait until all `n` have arrived; one of them, the last to
//! arrive, is told it is the leader. Arriving is a write the other tasks can observe, so it is a
//! scheduling point, and a waiting task stores its waker and returns `Pending`, as tokio's. A
//! waiter spends the cooperative budget as tokio's does through the watch channel it waits on.

use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use sim::sync::Shared;

use super::coop;
use super::wait_list::{wake_all, WaitList};

/// The count of tasks that arrived in this generation, and the generation (a release starts
/// the next); the engine hashes both and how many wait.
struct Core {
    n: usize,
    arrived: usize,
    generation: u64,
    waiters: WaitList,
}

impl Hash for Core {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.arrived.hash(state);
        self.generation.hash(state);
        self.waiters.len().hash(state);
    }
}

/// Lets `n` tasks wait for each other, as `tokio::sync::Barrier` (named `barrier#1`, ... in
/// traces).
///
/// ```
/// use std::sync::Arc;
/// use braid::tokio::{self, sync::Barrier};
///
/// braid::check(|| async {
///     let barrier = Arc::new(Barrier::new(2));
///     let b = barrier.clone();
///     let other = tokio::spawn(async move { b.wait().await.is_leader() });
///     let me = barrier.wait().await.is_leader();
///     // Exactly one of the two is the leader, whichever arrived last.
///     assert!(me ^ other.await.unwrap());
/// })
/// .assert_holds();
/// ```
pub struct Barrier {
    state: Shared<Core>,
}

impl Barrier {
    /// A barrier for `n` tasks (0 behaves as 1, as tokio's).
    pub fn new(n: usize) -> Barrier {
        Barrier {
            state: Shared::new(
                sim::sync::auto_name("barrier"),
                Core {
                    n: n.max(1),
                    arrived: 0,
                    generation: 0,
                    waiters: WaitList::default(),
                },
            ),
        }
    }

    /// Waits until `n` tasks have called `wait`; the last to arrive is the leader. A `wait`
    /// dropped before the release still counts as arrived (as tokio's).
    pub fn wait(&self) -> Wait<'_> {
        Wait {
            barrier: self,
            generation: None,
            ticket: None,
        }
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier").finish_non_exhaustive()
    }
}

/// The future of [`Barrier::wait`].
#[must_use = "futures do nothing unless awaited"]
pub struct Wait<'a> {
    barrier: &'a Barrier,
    /// The generation it arrived in, once it has.
    generation: Option<u64>,
    ticket: Option<u64>,
}

impl Future for Wait<'_> {
    type Output = BarrierWaitResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<BarrierWaitResult> {
        let this = &mut *self;
        let state = &this.barrier.state;
        match this.generation {
            None => {
                state.write_point_as("wait");
                let mut stale = None;
                let arrived = state.with_mut(|c| {
                    c.arrived += 1;
                    if c.arrived == c.n {
                        c.arrived = 0;
                        c.generation += 1;
                        return Err(c.waiters.take_all());
                    }
                    stale = c.waiters.register(&mut this.ticket, cx.waker());
                    Ok(c.generation)
                });
                // Outside the state's borrow: a waker's drop may reach this barrier again.
                drop(stale);
                match arrived {
                    Err(wakers) => {
                        wake_all(wakers);
                        Poll::Ready(BarrierWaitResult(true))
                    }
                    Ok(generation) => {
                        this.generation = Some(generation);
                        // tokio's waiter now polls its watch channel, which takes a unit of
                        // budget: kept for the earlier generation's value it finds at once
                        // (after the first), given back for the wait (or the task woken when
                        // none is left).
                        if generation > 0 {
                            if let Poll::Ready(coop) = coop::poll_proceed(cx) {
                                coop.made_progress();
                            }
                        }
                        let _ = coop::poll_proceed(cx);
                        state.waiting("wait", "the others not arrived");
                        Poll::Pending
                    }
                }
            }
            Some(generation) => {
                // tokio's waiter polls its watch channel, which takes a unit of budget first.
                let coop = ready!(coop::poll_proceed(cx));
                state.read_point_as("wait");
                let mut stale = None;
                let released = state.with_mut(|c| {
                    if c.generation != generation {
                        return true;
                    }
                    stale = c.waiters.register(&mut this.ticket, cx.waker());
                    false
                });
                drop(stale);
                if released {
                    this.ticket = None;
                    coop.made_progress();
                    Poll::Ready(BarrierWaitResult(false))
                } else {
                    state.waiting("wait", "the others not arrived");
                    Poll::Pending
                }
            }
        }
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        if self.ticket.is_some() && sim::engine_running() {
            let ticket = self.ticket.take();
            self.barrier.state.with_mut(|c| c.waiters.remove(ticket));
        }
    }
}

/// What [`Barrier::wait`] returns: whether this task was the leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this task was the last to arrive (one per release).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::tokio::{self, sync::Barrier};

    /// Three tasks, two generations: exactly one leader per release.
    #[test]
    fn one_leader_per_release() {
        crate::check(|| async {
            let barrier = Arc::new(Barrier::new(3));
            let mut tasks = Vec::new();
            for _ in 0..3 {
                let b = barrier.clone();
                tasks.push(tokio::spawn(async move {
                    let first = b.wait().await.is_leader();
                    let second = b.wait().await.is_leader();
                    (first as u32, second as u32)
                }));
            }
            let mut leaders = (0, 0);
            for t in tasks {
                let (a, b) = t.await.unwrap();
                leaders = (leaders.0 + a, leaders.1 + b);
            }
            assert_eq!(leaders, (1, 1));
        })
        .runs(2_000)
        .assert_holds();
    }
}
