//! A scenario's report as text, for people: a header, what the search covered, the outcome
//! against the expectation, the checks that stand behind it, and each violation found.

use sim::shrink::Minimality;
use sim::strategy::Reduction;
use std::fmt::Write as _;

use super::{AuditSummary, GrainCheckReport, ScenarioReport, ViolationReport};
use crate::colour;

/// A summary file as text (the summary's type is the engine's: `sim::summary_file`).
pub trait RenderText {
    fn render_text(&self) -> String;
}

/// The parts of a summary's text.
trait Parts {
    fn header(&self, out: &mut String);
    fn coverage(&self, out: &mut String);
    fn pct(&self, out: &mut String);
    fn outcome_line(&self, out: &mut String);
}

/// A part of the text written into the summary's.
trait Section {
    fn render_text(&self, out: &mut String);
}

/// A violation's text, which says how rare it was among `runs`.
trait ViolationText {
    fn render_text(&self, out: &mut String, runs: u64);
}

impl RenderText for ScenarioReport {
    fn render_text(&self) -> String {
        let mut out = String::new();
        self.header(&mut out);
        if self.interrupted {
            let _ = writeln!(
                out,
                "  INTERRUPTED after {} runs: a partial exploration (replay files as found, not minimised)",
                self.runs
            );
        }
        self.coverage(&mut out);
        self.pct(&mut out);
        if self.determinism_checked > 0 {
            let _ = writeln!(
                out,
                "  determinism: {} runs re-executed, identical",
                self.determinism_checked
            );
        }
        self.outcome_line(&mut out);
        if let Some(g) = &self.grain_check {
            g.render_text(&mut out);
        }
        if let Some(a) = &self.audit {
            a.render_text(&mut out);
        }
        for v in &self.violations {
            v.render_text(&mut out, self.runs);
        }
        out.push('\n');
        out
    }
}

impl Parts for ScenarioReport {
    /// What was explored, how, and how fast.
    fn header(&self, out: &mut String) {
        let strategy = match self.depth {
            Some(d) => format!("{} depth {d}", self.strategy),
            None => self.strategy.clone(),
        };
        let mutant = match &self.mutant {
            Some(guard) => format!(" without guard {guard}"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{}{mutant}  ({}/{}, {strategy}, seed {}, {} grain)",
            self.scenario, self.model, self.variant, self.seed, self.grain
        );
        let _ = writeln!(
            out,
            "  runs {} ({}, up to {} steps) in {:.2}s: {:.0} runs/s",
            self.runs,
            self.distinct_text(),
            self.max_steps_seen,
            self.elapsed_ms / 1e3,
            self.runs_per_sec
        );
    }

    /// What the search covered: the default plan's course, or what a DFS proved (or did not).
    fn coverage(&self, out: &mut String) {
        let reduction = match (self.reduction, self.preemption_bound) {
            (Some(Reduction::None), _) => "no reduction",
            (Some(Reduction::VisitedStates), _) => "visited states",
            (_, _) => "partial-order reduction (experimental)",
        };
        if let Some(plan) = &self.plan {
            let _ = writeln!(out, "  default plan: {plan}");
        } else if self.strategy == "dfs" && self.runs == 0 {
            let _ = writeln!(
                out,
                "  INCONCLUSIVE: no run reached its end ({} cut short): nothing is proved",
                self.pruned
            );
        } else if self.exhaustive {
            let _ = writeln!(
                out,
                "  exhaustive: {} ({reduction}): {} schedules, {} pruned, {} end states",
                sim::explore::every_schedule(self.yielded_fairly),
                self.runs,
                self.pruned,
                self.end_states
            );
        } else if let Some(k) = self.proved_bound {
            let _ = writeln!(
                out,
                "  exhaustive within {} only ({reduction}): {} schedules, {} pruned, {} end states",
                sim::explore::preemptions(k),
                self.runs,
                self.pruned,
                self.end_states
            );
        } else if self.strategy == "dfs" {
            let _ = writeln!(
                out,
                "  NOT exhaustive: the budget ran out after {} schedules ({} pruned), before any preemption bound was finished",
                self.runs, self.pruned
            );
        }
    }

    /// PCT's confidence that a search which found nothing would have found a depth-d bug.
    fn pct(&self, out: &mut String) {
        if let (true, Some(p), Some(c)) = (
            self.violations.is_empty(),
            self.pct_bound,
            self.pct_confidence,
        ) {
            let _ = writeln!(
                out,
                "  PCT: each run finds a given depth-{} bug with probability >= {p:.2e}; {} runs found none: confidence {:.4}",
                self.depth.unwrap_or(0),
                self.runs,
                c
            );
        }
    }

    fn outcome_line(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "  outcome: {}; expected {}: {}",
            self.outcome,
            self.expected,
            if self.matches_expectation {
                colour::verdict("as expected", true)
            } else {
                colour::verdict("NOT AS EXPECTED", false)
            }
        );
    }
}

impl Section for GrainCheckReport {
    /// What the access-grain runs found, against what the scenario declares its grain hides.
    fn render_text(&self, out: &mut String) {
        let found = match (&self.invariant, &self.message) {
            (Some(inv), Some(msg)) => format!("found {inv}: {msg}"),
            _ => "found nothing".to_string(),
        };
        let declared = match (&self.declared, self.as_declared()) {
            (Some(d), true) => format!("the scenario declares its grain hides {d}"),
            (Some(d), false) => {
                format!("NOT AS DECLARED: the scenario says its grain hides {d}")
            }
            (None, true) => "nothing hidden".to_string(),
            (None, false) => {
                "NOT DECLARED: a coarse-grain \"holds\" does not stand (declare `hides`)"
                    .to_string()
            }
        };
        let _ = writeln!(
            out,
            "  grain check: {} runs at access grain {found}; {declared}",
            self.runs
        );
    }
}

impl Section for AuditSummary {
    fn render_text(&self, out: &mut String) {
        let verdict = match self.misses.is_empty() {
            true => "nothing missed".to_string(),
            false => format!(
                "FAILED: the reduced search missed {}",
                self.misses.join("; ")
            ),
        };
        let _ = writeln!(
            out,
            "  reduction audit: {} of {} pruned branches re-explored by plain DFS ({} to the end, {} runs): {verdict}",
            self.audited, self.pruned_branches, self.complete, self.runs
        );
    }
}

impl ViolationText for ViolationReport {
    /// When it was first found, its schedule as shrunk and as found, and how to replay it.
    fn render_text(&self, out: &mut String, runs: u64) {
        let _ = writeln!(
            out,
            "  violation {}: first in run {} of {runs} (the replay file's `found.run` {}: an index that also counts runs a reduction cut short), {} runs broke it, first after {:.1} ms",
            self.invariant, self.runs_to_first, self.first_run, self.count, self.time_to_first_ms
        );
        let minimality = match self.minimality {
            Some(Minimality::Minimum) => ", the minimum (proved)",
            Some(Minimality::OneMinimal) if self.shrink_timed_out => {
                ", 1-minimal (fewer not ruled out: the search ran out of time)"
            }
            Some(Minimality::OneMinimal) => ", 1-minimal (fewer not ruled out)",
            None => "",
        };
        let _ = writeln!(
            out,
            "    schedule: {} steps, {}{minimality} (as found: {} steps, {})",
            self.steps,
            sim::explore::preemptions(self.preemptions),
            self.found_steps,
            sim::explore::preemptions(self.found_preemptions)
        );
        let _ = writeln!(out, "    {}", self.message);
        let _ = writeln!(out, "    replay: braid replay {}", self.replay_file);
    }
}
