//! The names a run hands out: each task's unique name (its identity in replay files), and the
//! numbers of unnamed objects (`mutex#3`).

use std::collections::{HashMap, HashSet};

use crate::rt::task::Task;

#[derive(Default)]
pub(crate) struct Names {
    /// Task names taken (kept as a set once a run has many tasks: below that a scan is
    /// cheaper than the set), and per name the last `#n` suffix given to a namesake.
    taken: Option<HashSet<String>>,
    namesakes: HashMap<String, usize>,
    /// Per kind of object, the last number given to an unnamed one (a run has a few kinds: a
    /// list, where a map allocated a node in every run).
    auto: Vec<(&'static str, usize)>,
}

impl Names {
    /// `name`, or, if a task of `tasks` has it, the first free `name#n`. A set of the names
    /// taken and, per name, the last suffix handed out keep a spawn O(1) however many tasks a
    /// run has (lookups only: no iteration order reaches the run).
    pub(crate) fn unique(&mut self, name: String, tasks: &[Task]) -> String {
        let mut unique = name;
        if self.is_taken(&unique, tasks) {
            let base = std::mem::take(&mut unique);
            let mut n = self.namesakes.get(base.as_str()).copied().unwrap_or(1);
            loop {
                n += 1;
                unique = format!("{base}#{n}");
                if !self.is_taken(&unique, tasks) {
                    break;
                }
            }
            self.namesakes.insert(base, n);
        }
        if let Some(names) = &mut self.taken {
            names.insert(unique.clone());
        }
        unique
    }

    /// Whether a task already has this name.
    fn is_taken(&mut self, name: &str, tasks: &[Task]) -> bool {
        const SCAN: usize = 32;
        if self.taken.is_none() && tasks.len() > SCAN {
            self.taken = Some(tasks.iter().map(|t| t.name.to_string()).collect());
        }
        match &self.taken {
            Some(names) => names.contains(name),
            None => tasks.iter().any(|t| *t.name == *name),
        }
    }

    /// A name for an unnamed object of this kind: `mutex#1`, `mutex#2`, ...
    pub(crate) fn auto_name(&mut self, kind: &'static str) -> String {
        let n = match self.auto.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => n,
            None => {
                self.auto.push((kind, 0));
                &mut self.auto.last_mut().expect("just pushed").1
            }
        };
        *n += 1;
        format!("{kind}#{n}")
    }
}

/// A task's name without the `#n` that `Names::unique` appends to a namesake's.
pub(crate) fn base_name(name: &str) -> &str {
    match name.rsplit_once('#') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}
