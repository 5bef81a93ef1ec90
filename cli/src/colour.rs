//! Colour for verdicts on a terminal: green for what is as it should be, red for what is not.
//! Off when stdout is not a terminal and whenever `NO_COLOR` is set (no-color.org);
//! `CLICOLOR_FORCE` turns it on for a pipe.

use std::io::IsTerminal;
use std::sync::OnceLock;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            false
        } else {
            set("CLICOLOR_FORCE") || std::io::stdout().is_terminal()
        }
    })
}

/// `text`, green when `good`, red when not (when colour is on).
pub fn verdict(text: &str, good: bool) -> String {
    if enabled() {
        let code = if good { 32 } else { 31 };
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
