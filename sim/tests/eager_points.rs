//! `Model::one_point_per_poll`: a task whose polls reach one scheduling point each parks right
//! at its point (and goes on in the same poll when picked again) instead of once its poll has
//! returned. That must be the same search, schedule for schedule: checked on generated programs
//! (chains of awaits, which we did not write for this) under plain DFS and under random
//! sampling. A model that declares it and breaks it is caught, not silently explored wrong.

mod proggen;

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use proggen::{generate, GenModel, GenOptions};
use sim::explore::{Explorer, Summary};
use sim::strategy::{Reduction, StrategyKind};
use sim::{yield_point, Grain, Model, Monitor, Violation};

/// A model with its declaration set one way or the other.
struct Declared<'m> {
    model: &'m dyn Model,
    one_point_per_poll: bool,
}

impl Model for Declared<'_> {
    fn start(&self) -> Rc<dyn Monitor> {
        self.model.start()
    }
    fn grain(&self) -> Grain {
        self.model.grain()
    }
    fn reduction_safe(&self) -> bool {
        self.model.reduction_safe()
    }
    fn state_visible(&self) -> bool {
        self.model.state_visible()
    }
    fn one_point_per_poll(&self) -> bool {
        self.one_point_per_poll
    }
}

/// What two searches must agree on: every run's schedule (their set and count), end states
/// and violations, each with the run and step it came at.
fn fingerprint(s: &Summary) -> String {
    let violations: Vec<_> = s
        .violations
        .iter()
        .map(|f| {
            (
                &f.invariant,
                &f.message,
                f.first_run,
                f.count,
                f.run.steps,
                f.run.digest,
            )
        })
        .collect();
    format!(
        "runs {} exhaustive {} schedules {:?} end states {:?} violations {:?}",
        s.runs,
        s.exhaustive,
        s.schedules.count(),
        s.end_states,
        violations
    )
}

fn search(model: &dyn Model, strategy: StrategyKind, runs: u64) -> Summary {
    Explorer::new(model)
        .strategy(strategy)
        .seed(7)
        .runs(runs)
        .run()
        .expect("explores")
}

/// Traced runs of a random schedule: every step, its effect (what a load read, what a choose
/// drew) and every event, as text.
fn traces(model: &dyn Model, runs: u64) -> String {
    let config = sim::RunConfig {
        trace: true,
        ..sim::RunConfig::default()
    };
    let mut strategy = StrategyKind::Random.build(7, 0);
    let mut out = String::new();
    for run in 0..runs {
        let (result, back) = sim::run_once(model, strategy, run, &config);
        strategy = back;
        out += &result.trace.map(|t| t.render_text()).unwrap_or_default();
        out += &format!("{:?}\n", result.outcome);
    }
    out
}

#[test]
fn parking_at_the_point_is_the_same_search_on_generated_programs() {
    let opts = GenOptions {
        spin: true,
        ..GenOptions::default()
    };
    let mut compared = 0;
    for seed in 1..=60 {
        let program = GenModel {
            program: Arc::new(generate(seed, &opts)),
            visible: false,
        };
        for strategy in [
            StrategyKind::Dfs {
                preemption_bound: None,
                reduction: Reduction::None,
            },
            StrategyKind::Random,
            StrategyKind::Pct { depth: 3 },
            StrategyKind::Pos,
        ] {
            let [lazy, eager] = [false, true].map(|one_point_per_poll| {
                let model = Declared {
                    model: &program,
                    one_point_per_poll,
                };
                fingerprint(&search(&model, strategy, 200))
            });
            assert_eq!(
                lazy, eager,
                "seed {seed}, {strategy:?}:\n{}",
                program.program
            );
            compared += 1;
        }
        let [lazy, eager] = [false, true].map(|one_point_per_poll| {
            let model = Declared {
                model: &program,
                one_point_per_poll,
            };
            traces(&model, 20)
        });
        assert!(
            lazy == eager,
            "seed {seed}: traces differ\n{}",
            program.program
        );
    }
    assert_eq!(compared, 240);
}

/// One task polls two points in one poll (a hand-written join): parked at the first, it
/// reaches the second.
struct TwoPointsInAPoll;

impl Model for TwoPointsInAPoll {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("joiner", async {
            let mut a: Pin<Box<dyn Future<Output = ()>>> = Box::pin(yield_point("a"));
            let mut b: Pin<Box<dyn Future<Output = ()>>> = Box::pin(yield_point("b"));
            let (mut a_done, mut b_done) = (false, false);
            std::future::poll_fn(|cx| {
                a_done = a_done || a.as_mut().poll(cx).is_ready();
                b_done = b_done || b.as_mut().poll(cx).is_ready();
                if a_done && b_done {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
            .await;
        });
        sim::spawn("other", async {
            yield_point("c").await;
        });
        Rc::new(Nothing)
    }

    fn one_point_per_poll(&self) -> bool {
        true
    }
}

/// One task gives up on a point it is parked at (a hand-written select that takes the other
/// branch on its next poll).
struct DropsAParkedPoint;

impl Model for DropsAParkedPoint {
    fn start(&self) -> Rc<dyn Monitor> {
        sim::spawn("selector", async {
            let mut a: Option<Pin<Box<dyn Future<Output = ()>>>> = Some(Box::pin(yield_point("a")));
            let mut polls = 0;
            std::future::poll_fn(|cx| {
                polls += 1;
                if polls > 1 {
                    a = None;
                    return Poll::Ready(());
                }
                match a.as_mut().map(|a| a.as_mut().poll(cx)) {
                    Some(Poll::Ready(())) => Poll::Ready(()),
                    _ => Poll::Pending,
                }
            })
            .await;
        });
        sim::spawn("other", async {
            yield_point("c").await;
        });
        Rc::new(Nothing)
    }

    fn one_point_per_poll(&self) -> bool {
        true
    }
}

struct Nothing;

impl Monitor for Nothing {
    fn at_quiescence(&self) -> Option<Violation> {
        None
    }
}

fn breach(model: &dyn Model) -> String {
    let s = search(model, StrategyKind::Random, 200);
    let found = s
        .violations
        .iter()
        .find(|f| f.invariant == "panic")
        .unwrap_or_else(|| panic!("the breach is caught: {}", fingerprint(&s)));
    found.message.clone()
}

/// The same model without the declaration: parked lazily, it runs without a violation.
fn assert_runs_clean_undeclared(model: &dyn Model) {
    let undeclared = Declared {
        model,
        one_point_per_poll: false,
    };
    let s = search(&undeclared, StrategyKind::Random, 200);
    assert!(s.violations.is_empty(), "{}", fingerprint(&s));
}

#[test]
fn a_second_point_in_a_poll_breaks_the_declaration_loudly() {
    let message = breach(&TwoPointsInAPoll);
    assert!(
        message.contains("second scheduling point") && message.contains("one_point_per_poll"),
        "{message}"
    );
    // Undeclared, the same task runs (its first point is the one it parks on).
    assert_runs_clean_undeclared(&TwoPointsInAPoll);
}

#[test]
fn a_dropped_parked_point_breaks_the_declaration_loudly() {
    let message = breach(&DropsAParkedPoint);
    assert!(
        message.contains("dropped the scheduling point") && message.contains("one_point_per_poll"),
        "{message}"
    );
    assert_runs_clean_undeclared(&DropsAParkedPoint);
}

/// Two tasks draw values and race on a shared atomic; the run fails on one combination.
struct DrawsAndRaces;

impl Model for DrawsAndRaces {
    fn start(&self) -> Rc<dyn Monitor> {
        let cell = Rc::new(sim::sync::Atomic::new("cell", 0usize));
        for name in ["a", "b"] {
            let cell = cell.clone();
            sim::spawn(name, async move {
                let v = sim::choose(3).await;
                let seen = cell.load().await;
                cell.store(seen + v).await;
                assert!(seen + v < 4, "{name} drew {v} over {seen}");
            });
        }
        Rc::new(Nothing)
    }

    fn one_point_per_poll(&self) -> bool {
        true
    }
}

#[test]
fn parking_at_the_point_is_the_same_search_on_a_model_that_draws() {
    let [lazy, eager] = [false, true].map(|one_point_per_poll| {
        let model = Declared {
            model: &DrawsAndRaces,
            one_point_per_poll,
        };
        let dfs = StrategyKind::Dfs {
            preemption_bound: None,
            reduction: Reduction::None,
        };
        (
            fingerprint(&search(&model, dfs, 10_000)),
            traces(&model, 50),
        )
    });
    assert!(lazy.0.contains("exhaustive true"), "{}", lazy.0);
    assert!(lazy.0.contains("drew"), "{}", lazy.0);
    assert_eq!(lazy, eager);
}
