//! The environment overrides `#[braid::test]` documents: BRAID_SEED, BRAID_RUNS, BRAID_TIME,
//! BRAID_OUT and BRAID_REPLAY. One test in its own binary: the environment is the process's.

use std::panic;

use braid::{Outcome, Source, Strategy};

async fn racy() {
    let flag = std::rc::Rc::new(braid::sync::Mutex::new(false));
    let f = flag.clone();
    let setter = braid::spawn(async move { *f.lock().await = true });
    let seen = *flag.lock().await;
    setter.await.unwrap();
    assert!(seen, "read the flag before it was set");
}

async fn quiet() {
    let t = braid::spawn(async { braid::task::yield_now().await });
    t.await.unwrap();
}

fn set(name: &str, value: &str) {
    // SAFETY: this binary's only test sets the variables, before any thread reads them.
    unsafe { std::env::set_var(name, value) };
}

fn unset(name: &str) {
    // SAFETY: as above.
    unsafe { std::env::remove_var(name) };
}

#[test]
fn environment_overrides() {
    // BRAID_RUNS caps a sampling strategy's runs.
    set("BRAID_RUNS", "7");
    match braid::check(quiet)
        .strategy(Strategy::Random)
        .runs(1000)
        .run()
        .outcome
    {
        Outcome::Holds { runs, .. } => assert_eq!(runs, 7),
        other => panic!("{other:?}"),
    }
    unset("BRAID_RUNS");

    // BRAID_SEED is the seed the failure reports.
    set("BRAID_SEED", "42");
    let out = tempfile::tempdir().unwrap();
    set("BRAID_OUT", out.path().to_str().unwrap());
    let report = braid::check(racy)
        .name("env::racy")
        .strategy(Strategy::Random)
        .run();
    let failure = report.failure().expect("found");
    assert!(failure.found_by.contains("seed 42"), "{}", failure.found_by);
    // BRAID_OUT is where its file went.
    let file = failure.file.clone().unwrap();
    assert!(file.starts_with(out.path()), "{}", file.display());
    unset("BRAID_SEED");
    unset("BRAID_OUT");

    // BRAID_REPLAY replays that file for the check it names, in one run.
    set("BRAID_REPLAY", file.to_str().unwrap());
    let replayed = braid::check(racy).name("env::racy").run();
    assert_eq!(
        replayed.failure().expect("fails again").source,
        Source::Replay
    );
    unset("BRAID_REPLAY");

    // A malformed value is a clear failure naming the variable, not a silent default.
    for (name, value) in [
        ("BRAID_TIME", "-1"),
        ("BRAID_RUNS", "0"),
        ("BRAID_SEED", "x"),
        ("BRAID_TIME", "1e300"),
    ] {
        set(name, value);
        let result = panic::catch_unwind(|| braid::check(quiet).run());
        unset(name);
        let message = *result
            .expect_err("a bad value panics")
            .downcast::<String>()
            .unwrap();
        assert!(
            message.contains(name) && message.contains(value),
            "{message}"
        );
    }

    // BRAID_TIME bounds the exploration by wall time.
    set("BRAID_TIME", "0.2");
    let started = std::time::Instant::now();
    let report = braid::check(quiet).strategy(Strategy::Random).run();
    unset("BRAID_TIME");
    assert!(matches!(report.outcome, Outcome::Holds { .. }));
    assert!(started.elapsed().as_secs_f64() < 10.0);
}
