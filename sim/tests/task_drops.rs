//! When the driver drops a task's future. The tasks left when a run ends go after the verdict
//! (a monitor judges the end state before any of them goes), in task order, and a task spawned
//! by one of those drops goes in turn; stackless and stackful alike, whatever the schedule. A
//! crash's victims go within the crash's step, in task order, before the node boots again.

use std::rc::Rc;
use std::sync::{Arc, Mutex};

use sim::strategy::Random;
use sim::sync::{channel, Receiver};
use sim::{run_once, Model, Monitor, RunConfig, Violation};

type Log = Arc<Mutex<Vec<String>>>;

/// Notes its name in the log when dropped; one that `spawns` spawns a task as it goes.
struct Logged {
    name: &'static str,
    log: Log,
    spawns: bool,
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.name.to_string());
        if self.spawns {
            let late = logged("late", &self.log, false);
            sim::spawn("late", async move {
                let _late = late;
            });
        }
    }
}

fn logged(name: &'static str, log: &Log, spawns: bool) -> Logged {
    Logged {
        name,
        log: log.clone(),
        spawns,
    }
}

/// Spawns a task named `name` that holds `held` and waits for good on `rx`.
fn spawn_holding(name: &'static str, held: Logged, rx: &Rc<Receiver<u32>>) {
    let rx = rx.clone();
    sim::spawn(name, async move {
        let _held = held;
        rx.recv_idle().await;
    });
}

/// The main task starts three tasks that each hold a `Logged` and wait forever on a channel
/// nobody sends on, yields, and returns: the run is over, the three are left.
struct LeftBehind {
    stackful: bool,
    log: Log,
}

impl Model for LeftBehind {
    fn start(&self) -> Rc<dyn Monitor> {
        let log = self.log.clone();
        let (tx, rx) = channel::<u32>("never", 1);
        let rx = Rc::new(rx);
        sim::task::spawn_main("main", async move {
            for name in ["a", "b", "c"] {
                spawn_holding(name, logged(name, &log, name == "c"), &rx);
            }
            sim::yield_point("work").await;
            drop(tx);
        });
        Rc::new(NothingDroppedYet(self.log.clone()))
    }

    fn stackful_tasks(&self) -> bool {
        self.stackful
    }
}

/// At quiescence, no task's future has been dropped yet.
struct NothingDroppedYet(Log);

impl Monitor for NothingDroppedYet {
    fn at_quiescence(&self) -> Option<Violation> {
        let dropped = self.0.lock().unwrap();
        (!dropped.is_empty()).then(|| Violation {
            invariant: "dropped-after-verdict".into(),
            message: format!("dropped before the verdict: {dropped:?}"),
            step: 0,
        })
    }
}

#[test]
fn tasks_left_are_dropped_after_the_verdict_in_task_order() {
    for stackful in [false, true] {
        for run in 0..40 {
            let model = LeftBehind {
                stackful,
                log: Log::default(),
            };
            let strategy = Box::new(Random::new(3));
            let (result, _) = run_once(&model, strategy, run, &RunConfig::default());
            assert!(
                result.violation().is_none(),
                "stackful {stackful}, run {run}: {:?}",
                result.outcome
            );
            assert_eq!(
                *model.log.lock().unwrap(),
                ["a", "b", "c", "late"],
                "stackful {stackful}, run {run}"
            );
        }
    }
}

/// A node whose init holds a `Logged` and starts two tasks that hold one each, all waiting for
/// good; the main task yields while the node may crash once.
struct CrashingNode {
    log: Log,
}

impl Model for CrashingNode {
    fn start(&self) -> Rc<dyn Monitor> {
        let log = self.log.clone();
        let (tx, rx) = channel::<u32>("never", 1);
        let rx = Rc::new(rx);
        sim::node::start("n", move || {
            let (log, rx) = (log.clone(), rx.clone());
            async move {
                log.lock().unwrap().push("boot".to_string());
                let _held = logged("init", &log, false);
                for name in ["a", "b"] {
                    spawn_holding(name, logged(name, &log, false), &rx);
                }
                rx.recv_idle().await;
            }
        });
        sim::task::spawn_main("main", async move {
            for _ in 0..4 {
                sim::yield_point("work").await;
            }
            drop(tx);
        });
        // Victims go before the end: no check at quiescence here.
        Rc::new(NoCheck)
    }

    fn crashes(&self) -> usize {
        1
    }
}

struct NoCheck;

impl Monitor for NoCheck {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}

#[test]
fn a_crash_drops_its_victims_in_task_order_before_the_node_boots_again() {
    let mut crashes_with_two_victims = 0;
    for run in 0..200 {
        let model = CrashingNode {
            log: Log::default(),
        };
        let (result, _) = run_once(&model, Box::new(Random::new(5)), run, &RunConfig::default());
        assert!(
            result.violation().is_none(),
            "run {run}: {:?}",
            result.outcome
        );
        let log = model.log.lock().unwrap().clone();
        let Some(reboot) = log.iter().skip(1).position(|e| e == "boot") else {
            continue;
        };
        // Between the two boots: what the crash dropped, within its step.
        let victims = &log[1..=reboot];
        let order = ["init", "a", "b"];
        let expected: Vec<_> = order
            .iter()
            .filter(|n| victims.contains(&n.to_string()))
            .collect();
        assert_eq!(
            victims.iter().collect::<Vec<_>>(),
            expected,
            "run {run}: the victims' drops, in task order: {log:?}"
        );
        if victims.len() >= 2 {
            crashes_with_two_victims += 1;
        }
    }
    assert!(
        crashes_with_two_victims >= 10,
        "only {crashes_with_two_victims} of 200 runs crashed the node with two tasks or more"
    );
}
