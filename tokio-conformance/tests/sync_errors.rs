#![warn(rust_2018_idioms)]

use braid::tokio;

fn is_error<T: std::error::Error + Send + Sync>() {}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn mpsc_error_bound() {
    use tokio::sync::mpsc::error;

    is_error::<error::SendError<()>>();
    is_error::<error::TrySendError<()>>();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn oneshot_error_bound() {
    use tokio::sync::oneshot::error;

    is_error::<error::RecvError>();
    is_error::<error::TryRecvError>();
}

#[braid::test(runs = 100, time = 1, clock_jumps = 0)]
async fn watch_error_bound() {
    use tokio::sync::watch::error;

    is_error::<error::SendError<()>>();
}
