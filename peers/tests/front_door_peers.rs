//! The front door's lost-update and lock-order examples (examples/lost_update.rs,
//! examples/lock_order.rs) written for shuttle and for loom, to compare what a user writes
//! (each between `// lines:` and `// end`). Compiled, not run here: loom reports a deadlock by
//! panicking where it cannot unwind (the process aborts), and shuttle's and loom's checkers do
//! not share a test binary's threads; `cargo test -p peers --test front_door_peers -- --ignored
//! --test-threads=1 <name>` runs one.

use std::sync::Arc;

// lines: shuttle lost update
#[test]
#[ignore = "run one at a time: see the file's comment"]
#[should_panic(expected = "left: 1")]
fn shuttle_lost_update() {
    shuttle::check_random(
        || {
            let counter = Arc::new(shuttle::sync::Mutex::new(0));
            let c = counter.clone();
            let other = shuttle::thread::spawn(move || {
                let v = *c.lock().unwrap();
                *c.lock().unwrap() = v + 1;
            });
            let v = *counter.lock().unwrap();
            *counter.lock().unwrap() = v + 1;
            other.join().unwrap();
            assert_eq!(*counter.lock().unwrap(), 2);
        },
        1_000,
    );
}
// end

// lines: loom lost update
#[test]
#[ignore = "run one at a time: see the file's comment"]
#[should_panic(expected = "left: 1")]
fn loom_lost_update() {
    loom::model(|| {
        let counter = loom::sync::Arc::new(loom::sync::Mutex::new(0));
        let c = counter.clone();
        let other = loom::thread::spawn(move || {
            let v = *c.lock().unwrap();
            *c.lock().unwrap() = v + 1;
        });
        let v = *counter.lock().unwrap();
        *counter.lock().unwrap() = v + 1;
        other.join().unwrap();
        assert_eq!(*counter.lock().unwrap(), 2);
    });
}
// end

// lines: shuttle lock order
#[test]
#[ignore = "run one at a time: see the file's comment"]
#[should_panic(expected = "deadlock")]
fn shuttle_lock_order() {
    shuttle::check_random(
        || {
            let (a, b) = (
                Arc::new(shuttle::sync::Mutex::new(())),
                Arc::new(shuttle::sync::Mutex::new(())),
            );
            let (a2, b2) = (a.clone(), b.clone());
            let other = shuttle::thread::spawn(move || {
                let _a = a2.lock().unwrap();
                let _b = b2.lock().unwrap();
            });
            {
                let _b = b.lock().unwrap();
                let _a = a.lock().unwrap();
            }
            other.join().unwrap();
        },
        1_000,
    );
}
// end

// lines: loom lock order
#[test]
#[ignore = "run one at a time: see the file's comment"]
#[should_panic(expected = "deadlock")]
fn loom_lock_order() {
    loom::model(|| {
        let a = loom::sync::Arc::new(loom::sync::Mutex::new(()));
        let b = loom::sync::Arc::new(loom::sync::Mutex::new(()));
        let (a2, b2) = (a.clone(), b.clone());
        let other = loom::thread::spawn(move || {
            let _a = a2.lock().unwrap();
            let _b = b2.lock().unwrap();
        });
        {
            let _b = b.lock().unwrap();
            let _a = a.lock().unwrap();
        }
        other.join().unwrap();
    });
}
// end
