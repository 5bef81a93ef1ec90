//! The waker contract at a lazy scheduling point (a stackless task's): a point polled with a
//! waker that is not its task's own, as a combinator polls its sub-futures (futures-util's
//! `FuturesUnordered`, `buffered`, `join_all`), wakes that waker, so the combinator polls it
//! again once the task is granted its point. Before, the point returned `Pending` without
//! waking anyone, and a combinator that re-polls only woken sub-futures hung: a false deadlock.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use sim::explore::Explorer;
use sim::strategy::StrategyKind;
use sim::{yield_point, Model, Monitor, Violation};

/// A sub-future's own waker: marks it woken and wakes the combinator's parent.
#[derive(Default)]
struct SubWaker {
    woken: AtomicBool,
    parent: Mutex<Option<Waker>>,
}

impl Wake for SubWaker {
    fn wake(self: Arc<Self>) {
        self.woken.store(true, Ordering::Relaxed);
        if let Some(parent) = self.parent.lock().unwrap().as_ref() {
            parent.wake_by_ref();
        }
    }
}

/// A combinator of one sub-future that, like `FuturesUnordered`, polls it only when its own
/// waker was woken since the last poll (or at the first).
struct OnlyWhenWoken {
    sub: Pin<Box<dyn Future<Output = ()>>>,
    waker: Arc<SubWaker>,
    first: bool,
}

impl Future for OnlyWhenWoken {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.waker.parent.lock().unwrap() = Some(cx.waker().clone());
        let woken = self.waker.woken.swap(false, Ordering::Relaxed);
        if !std::mem::take(&mut self.first) && !woken {
            return Poll::Pending;
        }
        let waker = Waker::from(self.waker.clone());
        self.sub.as_mut().poll(&mut Context::from_waker(&waker))
    }
}

/// One task awaits two points through the combinator; another task competes for the baton.
struct ThroughACombinator;

impl Model for ThroughACombinator {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("combined", async {
            OnlyWhenWoken {
                sub: Box::pin(async {
                    yield_point("a").await;
                    yield_point("b").await;
                }),
                waker: Arc::default(),
                first: true,
            }
            .await;
        });
        sim::spawn("other", async {
            yield_point("c").await;
        });
        Rc::new(Nothing)
    }
}

struct Nothing;

impl Monitor for Nothing {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}

#[test]
fn a_lazy_point_wakes_a_combinators_waker() {
    for strategy in [StrategyKind::Random, StrategyKind::dfs(None)] {
        let summary = Explorer::new(&ThroughACombinator)
            .strategy(strategy)
            .seed(3)
            .runs(500)
            .run()
            .expect("explores");
        assert!(
            summary.violations.is_empty(),
            "{strategy:?}: {:?}",
            summary
                .violations
                .iter()
                .map(|v| &v.message)
                .collect::<Vec<_>>()
        );
        assert!(summary.runs > 0);
    }
}
