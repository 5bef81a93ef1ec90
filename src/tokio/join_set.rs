//! `tokio::task::JoinSet`: a collection of spawned tasks, joined in the order they finish.
//!
//! As tokio's, each task in the set has its own waker: a task's completion moves it to the
//! set's ready queue and wakes whoever waits in `join_next`, so `join_next` returns tasks in
//! the order they finished (not spawn order). The tasks themselves are `tokio::spawn` tasks
//! (their handles' operations are the scheduling points); dropping the set aborts them.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use super::join::{spawn, AbortHandle, JoinError, JoinHandle};
use super::lock;

/// Which entries were woken (their task finished or was cancelled), in wake order, and the
/// waker of whoever waits on the set.
#[derive(Default)]
struct Ready {
    queue: VecDeque<u64>,
    waiter: Option<Waker>,
}

/// One entry's waker: it queues the entry and wakes the set's waiter.
struct EntryWaker {
    id: u64,
    ready: Arc<Mutex<Ready>>,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let waiter = {
            let mut ready = lock(&self.ready);
            if !ready.queue.contains(&self.id) {
                ready.queue.push_back(self.id);
            }
            ready.waiter.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    }
}

struct Entry<T> {
    id: u64,
    handle: JoinHandle<T>,
    waker: Waker,
}

/// A set of tasks joined as they finish, as `tokio::task::JoinSet`.
///
/// ```
/// use braid::tokio::task::JoinSet;
///
/// braid::check(|| async {
///     let mut set = JoinSet::new();
///     for i in 0..3u32 {
///         set.spawn(async move { i * 10 });
///     }
///     let mut sum = 0;
///     while let Some(res) = set.join_next().await {
///         sum += res.unwrap();
///     }
///     assert_eq!(sum, 30);
///     assert!(set.is_empty());
/// })
/// .assert_holds();
/// ```
pub struct JoinSet<T> {
    entries: Vec<Entry<T>>,
    ready: Arc<Mutex<Ready>>,
    next_id: u64,
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> Self {
        JoinSet {
            entries: Vec::new(),
            ready: Arc::new(Mutex::new(Ready::default())),
            next_id: 0,
        }
    }

    /// How many tasks are in the set (finished ones not yet joined included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let id = self.next_id;
        self.next_id += 1;
        let abort = handle.abort_handle();
        let waker = Waker::from(Arc::new(EntryWaker {
            id,
            ready: self.ready.clone(),
        }));
        // A new entry is polled at the next `join_next` (as tokio's, which starts it notified).
        lock(&self.ready).queue.push_back(id);
        self.entries.push(Entry { id, handle, waker });
        abort
    }

    /// Polls the entries woken since the last look, in wake order; the first that has
    /// finished leaves the set.
    fn poll_entries(&mut self, cx: Option<&mut Context<'_>>) -> Poll<Option<Result<T, JoinError>>> {
        if self.entries.is_empty() {
            return Poll::Ready(None);
        }
        loop {
            let next = lock(&self.ready).queue.pop_front();
            let Some(id) = next else { break };
            let Some(at) = self.entries.iter().position(|e| e.id == id) else {
                continue;
            };
            let entry = &mut self.entries[at];
            let mut entry_cx = Context::from_waker(&entry.waker);
            // As tokio's: `try_join_next`, which cannot yield, looks without a budget; with
            // the budget spent, a handle stays queued and the task yields.
            let polled = match cx.is_some() {
                true => Pin::new(&mut entry.handle).poll(&mut entry_cx),
                false => {
                    Pin::new(&mut super::coop::unconstrained(&mut entry.handle)).poll(&mut entry_cx)
                }
            };
            if let Poll::Ready(out) = polled {
                self.entries.remove(at);
                return Poll::Ready(Some(out));
            }
            if let Some(cx) = cx.as_deref() {
                std::task::ready!(super::coop::poll_budget_available(cx));
            }
        }
        if let Some(cx) = cx {
            let mut ready = lock(&self.ready);
            if ready.queue.is_empty() {
                ready.waiter = Some(cx.waker().clone());
            } else {
                // Woken while it looked: look again.
                cx.waker().wake_by_ref();
            }
        }
        Poll::Pending
    }

    /// Waits for a task of the set to finish and returns its output (`None` when the set is
    /// empty). Cancel-safe: a dropped `join_next` loses no task.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        std::future::poll_fn(|cx| self.poll_entries(Some(cx))).await
    }

    /// As [`join_next`](Self::join_next), with the id tokio gives the task (here, the order
    /// it was spawned in the set).
    pub async fn join_next_with_id(&mut self) -> Option<Result<(u64, T), JoinError>> {
        std::future::poll_fn(|cx| self.poll_with_id(Some(cx))).await
    }

    fn poll_with_id(
        &mut self,
        cx: Option<&mut Context<'_>>,
    ) -> Poll<Option<Result<(u64, T), JoinError>>> {
        let before: Vec<u64> = self.entries.iter().map(|e| e.id).collect();
        match self.poll_entries(cx) {
            Poll::Ready(Some(out)) => {
                let id = before
                    .into_iter()
                    .find(|id| !self.entries.iter().any(|e| e.id == *id))
                    .expect("the joined entry");
                Poll::Ready(Some(out.map(|v| (id, v))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    /// A finished task's output, without waiting (`None` if none has finished, or the set is
    /// empty).
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        match self.poll_entries(None) {
            Poll::Ready(out) => out,
            Poll::Pending => None,
        }
    }

    /// As [`try_join_next`](Self::try_join_next), with the task's id in the set.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(u64, T), JoinError>> {
        match self.poll_with_id(None) {
            Poll::Ready(out) => out,
            Poll::Pending => None,
        }
    }

    /// Aborts every task in the set; they stay in it until joined (as cancelled, unless they
    /// finished first).
    pub fn abort_all(&mut self) {
        for entry in &self.entries {
            entry.handle.abort();
        }
    }

    /// Aborts every task and waits until they have all ended, emptying the set.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task and returns their outputs in the order they finished.
    ///
    /// # Panics
    /// If a task was cancelled (tokio panics on a task's panic too; under braid a panic has
    /// already ended the run).
    pub async fn join_all(mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        while let Some(res) = self.join_next().await {
            match res {
                Ok(v) => out.push(v),
                Err(e) => panic!("{e}"),
            }
        }
        out
    }

    /// Removes every task from the set without aborting them: they go on, detached.
    pub fn detach_all(&mut self) {
        self.entries.clear();
        lock(&self.ready).queue.clear();
    }
}

impl<T: 'static> JoinSet<T> {
    /// Spawns a task into the set, as `tokio::spawn`.
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        let handle = spawn(task);
        self.insert(handle)
    }

    /// Spawns a task into the set; as [`spawn`](Self::spawn) (braid's tasks all run on one
    /// thread).
    pub fn spawn_local<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.spawn(task)
    }

    /// Runs `f` as a task of the set (see [`spawn_blocking`](super::blocking::spawn_blocking)).
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send,
    {
        let handle = super::blocking::spawn_blocking(f);
        self.insert(handle)
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        if sim::engine_running() {
            self.abort_all();
        }
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len()).finish()
    }
}

impl<T: 'static, F: Future<Output = T> + 'static> FromIterator<F> for JoinSet<T> {
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(iter);
        set
    }
}

impl<T: 'static, F: Future<Output = T> + 'static> Extend<F> for JoinSet<T> {
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for task in iter {
            self.spawn(task);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tokio::{sync::oneshot, task::JoinSet};

    /// Tasks are joined in the order they finish; dropping the set aborts what is left.
    #[test]
    fn completion_order_and_drop_aborts() {
        crate::check(|| async {
            let (go_tx, go_rx) = oneshot::channel::<()>();
            let mut set = JoinSet::new();
            set.spawn(async move {
                go_rx.await.unwrap();
                1
            });
            set.spawn(async { 2 });
            assert_eq!(set.join_next().await.unwrap().unwrap(), 2);
            go_tx.send(()).unwrap();
            assert_eq!(set.join_next().await.unwrap().unwrap(), 1);
            assert!(set.join_next().await.is_none());

            let (held_tx, held_rx) = oneshot::channel::<()>();
            let mut set = JoinSet::new();
            set.spawn(async move {
                let _held = held_tx;
                std::future::pending::<()>().await;
            });
            drop(set);
            assert!(
                held_rx.await.is_err(),
                "the aborted task dropped its sender"
            );
        })
        .runs(2_000)
        .assert_holds();
    }
}
