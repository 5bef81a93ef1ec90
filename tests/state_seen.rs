//! `BRAID_STATE_SEEN=1` (`braid test --state-seen`): the user says every state the tests' tasks
//! share goes through braid, so a test declared to share plain state, every `#[tokio::test]`
//! through the drop-in among them, is searched with reduction. One test in this binary: the
//! variable is the process's.

use std::sync::Arc;

use braid::std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use braid::{Outcome, Strategy};

/// Three tasks, each on atomics of its own: plain DFS explores every interleaving, the
/// reduction one.
fn independent_tasks() -> braid::Check {
    braid::check(|| async {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let a = Arc::new(AtomicUsize::new(0));
                braid::spawn(async move {
                    a.fetch_add(1, SeqCst);
                    a.fetch_add(1, SeqCst);
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
    })
    .plain_state()
    .strategy(Strategy::dfs(None))
}

fn proof_runs(outcome: Outcome) -> u64 {
    match outcome {
        Outcome::Holds {
            runs,
            exhaustive: true,
            ..
        } => runs,
        other => panic!("expected a proof, got {other:?}"),
    }
}

#[test]
fn state_seen_searches_a_plain_state_test_with_reduction() {
    std::env::remove_var("BRAID_STATE_SEEN");
    let plain = proof_runs(independent_tasks().run().outcome);
    std::env::set_var("BRAID_STATE_SEEN", "1");
    let seen = proof_runs(independent_tasks().run().outcome);
    std::env::set_var("BRAID_STATE_SEEN", "0");
    let declined = proof_runs(independent_tasks().run().outcome);
    std::env::remove_var("BRAID_STATE_SEEN");
    eprintln!("{seen} runs reduced against {plain} plain");
    assert!(
        seen * 10 < plain,
        "{seen} runs reduced against {plain} plain"
    );
    assert_eq!(declined, plain);
}
