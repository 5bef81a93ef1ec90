//! Ctrl-C during `braid explore`, `ci` and `mutants`: the first stops the exploration between
//! runs (`ci` then skips its remaining checks), and braid writes
//! what it found (replay files as found, not minimised), prints the summary and exits 130; the
//! second exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The exit code of an interrupted command (128 + SIGINT, as a shell reports it).
pub const EXIT_CODE: u8 = 130;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// What a SIGINT does.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    /// The first: stop between runs and report.
    Stop,
    /// The second: exit now.
    Exit,
}

fn on_signal(flag: &AtomicBool) -> Action {
    if flag.swap(true, Ordering::SeqCst) {
        Action::Exit
    } else {
        Action::Stop
    }
}

/// Installs the handler (once per process). Without it, Ctrl-C ends braid at once, as usual.
pub fn install() {
    let flag = FLAG.get_or_init(Arc::default).clone();
    let handler = move || match on_signal(&flag) {
        Action::Stop => eprintln!(
            "\nbraid: interrupted: stopping, then writing what was found (Ctrl-C again to quit now)"
        ),
        Action::Exit => std::process::exit(i32::from(EXIT_CODE)),
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("braid: Ctrl-C will end braid without a summary: {e}");
    }
}

/// The flag the handler sets, when it is installed.
pub fn flag() -> Option<Arc<AtomicBool>> {
    FLAG.get().cloned()
}

/// Whether a Ctrl-C came.
pub fn interrupted() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_stops_and_the_second_exits() {
        let flag = AtomicBool::new(false);
        assert_eq!(on_signal(&flag), Action::Stop);
        assert!(flag.load(Ordering::SeqCst));
        assert_eq!(on_signal(&flag), Action::Exit);
        assert_eq!(on_signal(&flag), Action::Exit);
    }
}
