//! The marks a model leaves for the pictures (`sim::mark`) and what the engine records beside a
//! violation: a run goes exactly the same way with or without marks (no digest, step or decision
//! moves), the trace holds them only when it is kept, a FIFO violation names its two frames, and
//! a deadlock says who holds what each stuck task waits on.

use std::fmt;
use std::rc::Rc;

use sim::invariant::FifoPerKey;
use sim::strategy::Random;
use sim::sync::{channel, Mutex};
use sim::trace::{Mark, TraceLine};
use sim::{run_once, History, Model, Monitor, RunConfig};

/// A frame on the wire: (sequence number, key).
#[derive(Hash)]
struct Sent(u64, String);

impl fmt::Display for Sent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wire: {}", self.1)
    }
}

/// Two producers each put a message on a queue, a writer sends what it takes off to the wire; delivery must follow the numbering. With
/// `marks`, the writer's loop is a phase and each message is linked from queue to wire.
struct Pipeline {
    marks: bool,
}

impl Model for Pipeline {
    fn start(&self) -> Rc<dyn Monitor> {
        let history = History::new(vec![Box::new(
            FifoPerKey::new("in-order", |e: &Sent| vec![("the wire", e.0, e.1.clone())])
                .frames_keyed_by(|key: &String| key.clone()),
        )]);
        let (tx, rx) = channel::<(u64, String)>("queue", 2);
        let marks = self.marks;
        for (seq, key) in [(1u64, "m1"), (2, "m2")] {
            let tx = tx.clone();
            sim::spawn(format!("producer:{key}"), async move {
                tx.send((seq, key.to_string())).await;
                if marks {
                    sim::mark::enqueued(key);
                }
            });
        }
        let h = history.clone();
        sim::spawn("writer", async move {
            let _phase = marks.then(|| sim::mark::phase("drain"));
            for _ in 0..2 {
                let (seq, key) = rx.recv().await;
                if marks {
                    sim::mark::on_wire(&key);
                }
                h.emit(Sent(seq, key));
            }
        });
        history.monitor()
    }
}

fn config(trace: bool) -> RunConfig {
    RunConfig {
        max_steps: 1000,
        trace,
        record_accesses: false,
    }
}

fn run(model: &dyn Model, run: u64, trace: bool) -> sim::RunResult {
    run_once(model, Box::new(Random::new(11)), run, &config(trace)).0
}

#[test]
fn marks_change_no_digest_step_or_decision() {
    for r in 0..50 {
        let marked = run(&Pipeline { marks: true }, r, true);
        let unmarked = run(&Pipeline { marks: false }, r, true);
        let untraced = run(&Pipeline { marks: true }, r, false);
        for other in [&unmarked, &untraced] {
            assert_eq!(marked.digest, other.digest, "run {r}");
            assert_eq!(marked.steps, other.steps, "run {r}");
            assert_eq!(marked.decisions(), other.decisions(), "run {r}");
            assert_eq!(marked.violation(), other.violation(), "run {r}");
        }
        let trace = marked.trace.unwrap();
        let marks = |kind: Mark| {
            trace
                .lines
                .iter()
                .filter(|l| matches!(l, TraceLine::Mark { mark, .. } if *mark == kind))
                .count()
        };
        assert_eq!(marks(Mark::PhaseBegins), 1, "run {r}");
        assert!(
            marks(Mark::Enqueued) >= 1 && marks(Mark::OnWire) >= 1,
            "run {r}"
        );
        // The same steps, line for line, once the marks are left out.
        let steps = |t: &sim::trace::Trace| t.render_text();
        assert_eq!(steps(&trace), steps(&unmarked.trace.unwrap()), "run {r}");
    }
}

#[test]
fn a_fifo_violation_names_its_two_frames_in_the_trace_only() {
    let violating = (0..200)
        .map(|r| run(&Pipeline { marks: true }, r, true))
        .find(|r| r.violation().is_some())
        .expect("m2 overtakes m1 in some run");
    let v = violating.violation().unwrap();
    assert_eq!(v.invariant, "in-order");
    let trace = violating.trace.as_ref().unwrap();
    assert_eq!(
        trace.about,
        ["m2", "m1"],
        "the newer delivered first, then the older"
    );
    // Not part of the recorded violation: replay files keep their exact form.
    let json = serde_json::to_value(v).unwrap();
    assert_eq!(
        json.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["invariant", "message", "step"]
    );
    let svg = sim::render::svg(
        trace,
        &sim::render::Caption {
            title: "pipeline",
            verdict: None,
        },
    );
    assert_eq!(svg.matches(r#"class="about""#).count(), 2, "{svg}");
    assert!(svg.contains(r#"class="link""#) && svg.contains(r#"class="phase""#));
}

/// Lock-order inversion: a takes x then y, b takes y then x.
struct LockOrder;

impl Model for LockOrder {
    fn start(&self) -> Rc<dyn Monitor> {
        let x = Rc::new(Mutex::new("x", ()));
        let y = Rc::new(Mutex::new("y", ()));
        for (name, first, second) in [("a", x.clone(), y.clone()), ("b", y, x)] {
            sim::spawn(name, async move {
                let _g1 = first.lock().await;
                let _g2 = second.lock().await;
            });
        }
        History::<Sent>::new(vec![]).monitor()
    }
}

#[test]
fn a_deadlock_records_who_holds_what_each_task_waits_on() {
    let deadlocked = (0..200)
        .map(|r| run(&LockOrder, r, true))
        .find(|r| r.violation().is_some())
        .expect("the lock-order inversion deadlocks in some run");
    let trace = deadlocked.trace.as_ref().unwrap();
    let text = trace.render_wait_for();
    assert!(text.contains("a waits on lock y: held by b"), "{text}");
    assert!(text.contains("b waits on lock x: held by a"), "{text}");
    assert_eq!(trace.wait_for[0].holders, ["b"]);
    let untraced = (0..200)
        .map(|r| run(&LockOrder, r, false))
        .find(|r| r.violation().is_some())
        .unwrap();
    assert_eq!(
        untraced.violation(),
        deadlocked.violation(),
        "the message is the same with or without the wait-for"
    );
}
