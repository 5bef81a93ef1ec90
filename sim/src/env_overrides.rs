//! The environment's overrides of a check's settings, read in one place for both checkers
//! (`sim::check::Check` for models, the `braid` front door for test bodies), as proptest and
//! madsim users expect: `BRAID_SEED`, `BRAID_RUNS`, `BRAID_TIME` (seconds), `BRAID_REPLAY`.
//! A malformed value panics, naming the variable: a test must not quietly run with a budget
//! other than the one asked for. An empty value counts as unset.

use std::path::PathBuf;
use std::time::Duration;

/// A year of seconds: the longest time budget taken.
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// What the environment overrides; `None` where it says nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// `BRAID_SEED`: the exploration's seed.
    pub seed: Option<u64>,
    /// `BRAID_RUNS`: the run budget.
    pub runs: Option<u64>,
    /// `BRAID_TIME`: the wall-time budget, given in seconds.
    pub time: Option<Duration>,
    /// `BRAID_REPLAY`: a replay file to follow instead of exploring.
    pub replay: Option<PathBuf>,
}

impl Overrides {
    /// Reads `BRAID_SEED`, `BRAID_RUNS`, `BRAID_TIME` and `BRAID_REPLAY`.
    pub fn read() -> Overrides {
        Overrides {
            seed: var("BRAID_SEED", "a whole number", |v| v.parse().ok()),
            runs: var("BRAID_RUNS", "a whole number of at least 1", |v| {
                v.parse().ok().filter(|&r: &u64| r > 0)
            }),
            time: var(
                "BRAID_TIME",
                "seconds, more than 0 and at most a year",
                parse_seconds,
            ),
            replay: var("BRAID_REPLAY", "a path", |v| Some(PathBuf::from(v))),
        }
    }
}

/// A time budget in seconds: finite, more than zero (after rounding to nanoseconds), at most
/// a year.
pub fn parse_seconds(text: &str) -> Option<Duration> {
    text.parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= MAX_SECONDS)
        .map(Duration::from_secs_f64)
        .filter(|t| !t.is_zero())
}

/// The variable `name`, parsed; `None` if unset or empty. Panics, naming the variable and what
/// it should be, if `parse` rejects it.
pub fn var<T>(name: &str, expected: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    let value = std::env::var(name).ok().filter(|v| !v.is_empty())?;
    match parse(&value) {
        Some(v) => Some(v),
        None => panic!("braid: {name}={value} is not valid: expected {expected}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_bounded_and_never_round_to_zero() {
        assert_eq!(parse_seconds("1.5"), Some(Duration::from_millis(1500)));
        for bad in ["0", "-1", "1e-300", "1e300", "NaN", "inf", "x", ""] {
            assert_eq!(parse_seconds(bad), None, "{bad}");
        }
    }
}
