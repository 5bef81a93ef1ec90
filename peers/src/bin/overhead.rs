//! What a run of a user test costs apart from its program (issue 30, item 1): runs per
//! CPU-second and heap allocations per run of minimal bodies under `braid::check` (an empty
//! body; three spawned tasks joined; three left waiting on a channel's `recv` when the body
//! returns, or on a `Notify`; three that yield once; one task yielding 20 times; 20 atomic
//! adds), random strategy, one thread. Allocations are counted by a global allocator that wraps the system's.
//!
//! `cargo run --release -p peers --bin overhead -- [NAME|all] [RUNS]` (default all, 100,000).
use std::sync::atomic::{AtomicU64, Ordering};
/// The system allocator, counting allocations (and reallocations).
struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { std::alloc::System.realloc(p, l, n) }
    }
}
#[global_allocator]
static A: Counting = Counting;
#[path = "../cpu_time.rs"]
mod cpu_time;
use cpu_time::cpu_seconds;

fn main() {
    let n: u64 = std::env::args()
        .nth(2)
        .map_or(100_000, |a| a.parse().unwrap());
    let only = std::env::args().nth(1);
    for (name, check) in [
        ("empty", braid::check(|| async {})),
        (
            "3 spawns",
            braid::check(|| async {
                let t: Vec<_> = (0..3).map(|_| braid::spawn(async {})).collect();
                for t in t {
                    t.await.unwrap();
                }
            }),
        ),
        (
            "3 left on recv",
            braid::check(|| async {
                let mut keep = Vec::new();
                for _ in 0..3 {
                    let (tx, mut rx) = braid::tokio::sync::mpsc::channel::<u32>(1);
                    keep.push(tx);
                    braid::spawn(async move { rx.recv().await });
                }
                // The senders are kept by a fourth task, which waits for good too.
                braid::spawn(async move {
                    let _keep = keep;
                    std::future::pending::<()>().await
                });
                braid::task::yield_now().await;
            }),
        ),
        (
            "3 left on notified",
            braid::check(|| async {
                let n = std::sync::Arc::new(braid::tokio::sync::Notify::new());
                for _ in 0..3 {
                    let n = n.clone();
                    braid::spawn(async move { n.notified().await });
                }
                braid::task::yield_now().await;
            }),
        ),
        (
            "3 tasks yield",
            braid::check(|| async {
                for _ in 0..3 {
                    braid::spawn(async move { braid::task::yield_now().await });
                }
                braid::task::yield_now().await;
            }),
        ),
        (
            "1 task 20 yields",
            braid::check(|| async {
                for _ in 0..20 {
                    braid::task::yield_now().await;
                }
            }),
        ),
        (
            "20 atomics",
            braid::check(|| async {
                use braid::std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
                let a = AtomicUsize::new(0);
                for _ in 0..20 {
                    a.fetch_add(1, SeqCst);
                }
            }),
        ),
    ] {
        if only.as_deref().is_some_and(|o| o != "all" && o != name) {
            continue;
        }
        let a0 = ALLOCS.load(Ordering::Relaxed);
        let s = cpu_seconds();
        let _ = check.strategy(braid::Strategy::Random).runs(n).run();
        let d = cpu_seconds() - s;
        let allocs = (ALLOCS.load(Ordering::Relaxed) - a0) as f64 / n as f64;
        println!(
            "{name:<20} {:>8.0} runs/s  {:>6.2} us/run {allocs:.1} allocs/run",
            n as f64 / d,
            d / n as f64 * 1e6
        );
    }
}
