//! Engine objects are `Send + Sync` (as tokio's are) without a lock per access: only the run
//! that made one may touch it. Smuggled into a later run, on this thread or another, an object
//! stops that run with a clear failure instead of racing.

use std::rc::Rc;
use std::sync::{Arc, Mutex};

use sim::strategy::Random;
use sim::sync::{channel, Sender, Shared};
use sim::{run_once, Model, Monitor, RunConfig, RunOutcome, Violation};

/// Objects made by an earlier run.
type Smuggled = (Arc<Shared<u32>>, Sender<u32>);

static SMUGGLED: Mutex<Option<Smuggled>> = Mutex::new(None);

struct Quiet;

impl Monitor for Quiet {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}

/// Makes a shared value and a channel, uses them, and leaves them behind.
struct Maker;

impl Model for Maker {
    fn start(&self) -> Rc<dyn Monitor> {
        let shared = Arc::new(Shared::new("value", 1u32));
        let (tx, rx) = channel::<u32>("queue", 1);
        let (s, t) = (shared.clone(), tx.clone());
        sim::spawn("maker", async move {
            s.with_mut(|v| *v += 1);
            t.send(2).await;
            assert_eq!(rx.recv().await, 2);
        });
        *SMUGGLED.lock().unwrap() = Some((shared, tx));
        Rc::new(Quiet)
    }
}

/// Touches what an earlier run made: the shared value, or the channel's queue (its length:
/// an operation that is a scheduling point would name an object this run does not have).
struct Thief {
    channel: bool,
}

impl Model for Thief {
    fn start(&self) -> Rc<dyn Monitor> {
        let (shared, tx) = SMUGGLED.lock().unwrap().clone().expect("a maker ran");
        let channel = self.channel;
        sim::spawn("thief", async move {
            match channel {
                true => drop(tx.len()),
                false => drop(shared.with(|v| *v)),
            }
        });
        Rc::new(Quiet)
    }
}

fn run(model: &dyn Model) -> RunOutcome {
    run_once(model, Box::new(Random::new(1)), 0, &RunConfig::default())
        .0
        .outcome
}

fn assert_refused(outcome: RunOutcome) {
    match outcome {
        RunOutcome::Violation(v) => assert!(
            v.message
                .contains("braid object used outside the run that made it"),
            "{v:?}"
        ),
        other => panic!("a smuggled object must stop the run, got {other:?}"),
    }
}

#[test]
fn an_object_serves_only_the_run_that_made_it() {
    assert_eq!(run(&Maker), RunOutcome::Holds);
    // On this thread, in a later run.
    assert_refused(run(&Thief { channel: false }));
    assert_refused(run(&Thief { channel: true }));
    // On another thread, in a run of its own.
    let elsewhere = std::thread::spawn(|| run(&Thief { channel: false }))
        .join()
        .unwrap();
    assert_refused(elsewhere);
}
