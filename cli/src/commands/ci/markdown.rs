//! The gate's result as Markdown, for a CI job summary (`--summary FILE`; on GitHub, append it to
//! `$GITHUB_STEP_SUMMARY`): the counts, each failed case, and each new violation with its replay
//! command and Mermaid diagram, which GitHub draws.

use std::fmt::Write as _;

use super::output::{headline, CiReport};

pub fn render(r: &CiReport) -> String {
    let mut out = format!("## {}\n\n", headline(r));
    let failed: Vec<_> = r.cases.iter().filter(|c| !c.ok).collect();
    if failed.is_empty() {
        out += "Every expectation holds.\n";
        return out;
    }
    out += "| check | case | result |\n|---|---|---|\n";
    for c in &failed {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            c.kind.name(),
            cell(&c.name),
            cell(&c.message)
        );
    }
    for v in failed.iter().filter_map(|c| c.new_violation.as_ref()) {
        let _ = write!(
            out,
            "\n### New violation in {}: {}\n\n{}\n\nReproduce: `braid replay {}`\n\n```mermaid\n{}```\n",
            v.scenario, v.invariant, v.message, v.replay, v.mermaid
        );
    }
    out
}

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
