//! A stackful task's future is kept on the task's own stack when it is small and boxed when it
//! is not (corosensei moves at most 1 KB onto a new stack): futures on either side of that
//! limit, and far above it, run to their end, keep what they hold across awaits, and are
//! dropped once when left waiting at a run's end.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use braid::tokio::sync::Notify;
use braid::{Outcome, Strategy};

/// Holds `N` bytes across awaits and returns their sum; counts its drop.
async fn hold<const N: usize>(fill: u8, notify: Arc<Notify>, drops: Arc<AtomicUsize>) -> usize {
    struct Dropped(Arc<AtomicUsize>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }
    let _dropped = Dropped(drops);
    let bytes = [fill; N];
    braid::task::yield_now().await;
    notify.notify_one();
    braid::task::yield_now().await;
    bytes.iter().map(|&b| usize::from(b)).sum()
}

#[test]
fn small_and_large_futures_run_to_their_end() {
    let report = braid::check(|| async {
        let notify = Arc::new(Notify::new());
        let drops = Arc::new(AtomicUsize::new(0));
        let small = braid::spawn(hold::<64>(1, notify.clone(), drops.clone()));
        let edge = braid::spawn(hold::<760>(2, notify.clone(), drops.clone()));
        let large = braid::spawn(hold::<8192>(3, notify.clone(), drops.clone()));
        assert_eq!(small.await.unwrap(), 64);
        assert_eq!(edge.await.unwrap(), 2 * 760);
        assert_eq!(large.await.unwrap(), 3 * 8192);
        assert_eq!(drops.load(SeqCst), 3);
    })
    .strategy(Strategy::Random)
    .runs(300)
    .run();
    assert!(
        matches!(report.outcome, Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
}

#[test]
fn large_futures_left_waiting_are_dropped_once() {
    let (made, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let counters = (made.clone(), drops.clone());
    let report = braid::check(move || {
        let (made, drops) = counters.clone();
        async move {
            let notify = Arc::new(Notify::new());
            for _ in 0..2 {
                let (notify, made, drops) = (notify.clone(), made.clone(), drops.clone());
                braid::spawn(async move {
                    // Nobody notifies: each task is left waiting, holding 4 KB and a count.
                    made.fetch_add(1, SeqCst);
                    hold::<4096>(1, notify.clone(), drops).await;
                    notify.notified().await;
                });
            }
            braid::task::yield_now().await;
        }
    })
    .strategy(Strategy::Random)
    .runs(200)
    .run();
    assert!(
        matches!(report.outcome, Outcome::Holds { .. }),
        "{:?}",
        report.outcome
    );
    assert!(made.load(SeqCst) > 0);
    assert_eq!(made.load(SeqCst), drops.load(SeqCst));
}
