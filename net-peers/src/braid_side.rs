//! The programs on braid's tokio facade (`braid::tokio::{net, fs, io, time, sync}`), and the
//! checks that explore them: `braid::check` with the default strategy, `.crashes(1)` for the
//! key-value store and `.network_faults(1)` for the counter.

use braid::tokio;
use braid::tokio::fs::{self, File, OpenOptions};
use braid::tokio::net::{TcpListener, TcpStream};

/// A directory is synced as on Linux: opened as a file and `sync_all`ed.
async fn sync_dir(path: &str) -> std::io::Result<()> {
    File::open(path).await?.sync_all().await
}

include!("programs.rs");

/// Where braid would write a failure's replay file: `/dev/null` is no directory, so the write
/// fails (the failure says so) and the bench leaves no file behind.
const NO_REPLAY_FILES: &str = "/dev/null";

/// Explores `program` with `seed`, at most `cap` runs, stopping at the first failure (which
/// braid then shrinks).
pub fn check(program: crate::Program, seed: u64, cap: u64) -> braid::Report {
    let check = match program {
        crate::Program::Kv => braid::check(|| {
            crate::measure::run_started();
            async {
                braid::node::start("kv", kv_server);
                kv_client().await;
            }
        })
        .crashes(1),
        crate::Program::Counter { deadline } => braid::check(move || {
            crate::measure::run_started();
            async move {
                braid::node::start("counter", counter_server);
                retrying_client(deadline.map(Duration::from_millis)).await;
            }
        })
        .network_faults(1),
    };
    check
        .name(program.name())
        .seed(seed)
        .runs(cap)
        .out(NO_REPLAY_FILES)
        .run()
}
