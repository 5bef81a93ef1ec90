//! Ranges for model parameters. A scenario or replay file is user input: a size far beyond
//! anything a model is explored at (a lane of 10^12 slots, 10^6 publishers) is refused with its
//! name and range, before anything is allocated or spawned.

/// The largest queue, window or limit a model accepts.
pub const MAX_SIZE: usize = 10_000;

/// The most tasks of one kind (publishers, connections) a model spawns.
pub const MAX_TASKS: usize = 10_000;

/// `name`'s `value` must lie in `min..=max`.
pub fn check(name: &str, value: usize, min: usize, max: usize) -> Result<(), String> {
    if (min..=max).contains(&value) {
        Ok(())
    } else if value < min {
        Err(format!("{name} must be at least {min}, not {value}"))
    } else {
        Err(format!("{name} must be at most {max}, not {value}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_parameter_and_its_range() {
        assert_eq!(check("window", 3, 1, 10), Ok(()));
        assert_eq!(
            check("window", 0, 1, 10),
            Err("window must be at least 1, not 0".into())
        );
        assert_eq!(
            check("window", 11, 1, 10),
            Err("window must be at most 10, not 11".into())
        );
    }
}
