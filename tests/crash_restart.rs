//! Crash and restart (issue 15): a strategy may kill a node at any scheduling point, its init
//! runs again, and only `Durable` state survives. The buggy worker advances its durable cursor
//! before doing the job, so a crash in between loses the job; the fixed one does the job first
//! (at least once, and the job is idempotent).

use std::collections::BTreeSet;
use std::rc::Rc;

use braid::node::{self, Durable};
use braid::tokio::task::yield_now;
use braid::{Outcome, Strategy};

const JOBS: u32 = 3;

#[derive(Hash, Default)]
struct Disk {
    cursor: u32,
    done: BTreeSet<u32>,
    finished: bool,
}

fn worker(buggy: bool) -> impl Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
    move || {
        Box::pin(async move {
            let disk = Rc::new(Durable::new("disk", Disk::default()));
            let d = disk.clone();
            node::start("worker", move || {
                let d = d.clone();
                async move {
                    loop {
                        let job = d.with(|x| x.cursor);
                        if job == JOBS {
                            d.with_mut(|x| x.finished = true);
                            break;
                        }
                        if buggy {
                            d.with_mut(|x| x.cursor += 1);
                            yield_now().await;
                            d.with_mut(|x| x.done.insert(job));
                        } else {
                            d.with_mut(|x| x.done.insert(job));
                            yield_now().await;
                            d.with_mut(|x| x.cursor += 1);
                        }
                    }
                }
            });
            while !disk.with(|x| x.finished) {
                yield_now().await;
            }
            assert_eq!(disk.with(|x| x.done.len()), JOBS as usize, "a job was lost");
        })
    }
}

fn exhaustive(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Holds {
            exhaustive: true,
            ..
        }
    )
}

#[test]
fn a_crash_between_the_cursor_and_the_job_loses_it_and_the_replay_crashes_there_again() {
    // Named: an unnamed check's replay file is the `check.json` the parallel tests share.
    let name = "crash_restart/lost_job_replay";
    let report = braid::check(worker(true))
        .name(name)
        .crashes(1)
        .seed(3)
        .run();
    let failure = report.failure().expect("a crash in between loses a job");
    assert!(
        failure.message.contains("a job was lost"),
        "{}",
        failure.message
    );
    assert!(
        failure.trace.contains("crash node worker"),
        "{}",
        failure.trace
    );
    assert!(failure.trace.contains("killed worker"), "{}", failure.trace);
    let again = braid::check(worker(true))
        .name(name)
        .crashes(1)
        .replay(failure.file.clone().expect("a replay file"))
        .run();
    assert_eq!(
        again.failure().expect("it fails again").trace,
        failure.trace
    );
}

#[test]
fn without_crashes_the_buggy_worker_holds_and_with_them_the_fixed_one_does() {
    let no_crash = braid::check(worker(true))
        .strategy(Strategy::dfs(None))
        .run();
    assert!(exhaustive(&no_crash.outcome), "{:?}", no_crash.outcome);
    for crashes in [1, 2] {
        let fixed = braid::check(worker(false))
            .crashes(crashes)
            .strategy(Strategy::dfs(None))
            .run();
        assert!(exhaustive(&fixed.outcome), "{crashes}: {:?}", fixed.outcome);
    }
    let found = braid::check(worker(true))
        .crashes(1)
        .strategy(Strategy::dfs(None))
        .run();
    assert!(
        found.failure().is_some(),
        "DFS finds the crash that loses a job"
    );
}

#[test]
fn shrinking_keeps_only_the_crash_the_failure_needs() {
    let report = braid::check(worker(true))
        .crashes(3)
        .strategy(Strategy::Random)
        .seed(7)
        .run();
    let failure = report.failure().expect("found");
    let crashes = failure.trace.matches("crash node worker").count();
    assert_eq!(crashes, 1, "{}", failure.trace);
}

#[test]
fn a_killed_task_releases_its_lock_and_its_join_fails() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // Runs (over the whole search) in which the holder was killed and main then got the lock.
    static FREED: AtomicUsize = AtomicUsize::new(0);
    let report = braid::check(|| async {
        let lock = Rc::new(braid::std::sync::Mutex::new(0));
        let (tx, rx) = braid::tokio::sync::oneshot::channel::<braid::task::JoinHandle<()>>();
        let tx = Rc::new(std::cell::RefCell::new(Some(tx)));
        let l = lock.clone();
        node::start("holder", move || {
            let (l, tx) = (l.clone(), tx.clone());
            async move {
                let Some(tx) = tx.borrow_mut().take() else {
                    return; // restarted: nothing more to do
                };
                let inner = braid::spawn(async { std::future::pending::<()>().await });
                let _guard = l.lock().unwrap();
                let _ = tx.send(inner);
                std::future::pending::<()>().await;
            }
        });
        let Ok(inner) = rx.await else {
            return; // the holder was killed before it took the lock
        };
        for _ in 0..4 {
            if let Ok(mut n) = lock.try_lock() {
                *n += 1;
                // Only a crash of the holder frees the lock, and it kills the inner task too.
                assert!(inner.await.is_err(), "a killed task has no output");
                FREED.fetch_add(1, Ordering::Relaxed);
                return;
            }
            yield_now().await;
        }
    })
    .crashes(1)
    .strategy(Strategy::dfs(None))
    .run();
    assert!(exhaustive(&report.outcome), "{:?}", report.outcome);
    assert!(
        FREED.load(Ordering::Relaxed) > 0,
        "some schedule crashes the holder"
    );
}
