//! JUnit XML, the format CI systems read test results from.

use std::fmt::Write as _;

/// One test case: a seed file, a scenario or a mutant.
pub struct Case {
    pub suite: &'static str,
    pub name: String,
    pub seconds: f64,
    /// `Some((message, body))` when the case failed.
    pub failure: Option<(String, String)>,
}

fn esc(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn render(cases: &[Case]) -> String {
    let mut suites: Vec<&'static str> = Vec::new();
    for c in cases {
        if !suites.contains(&c.suite) {
            suites.push(c.suite);
        }
    }
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"braid ci\" tests=\"{}\" failures=\"{failures}\">",
        cases.len()
    );
    for suite in suites {
        let in_suite: Vec<&Case> = cases.iter().filter(|c| c.suite == suite).collect();
        let failed = in_suite.iter().filter(|c| c.failure.is_some()).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failed}\">",
            in_suite.len()
        );
        for c in in_suite {
            let _ = write!(
                out,
                "    <testcase classname=\"braid.{suite}\" name=\"{}\" time=\"{:.3}\"",
                esc(&c.name),
                c.seconds
            );
            match &c.failure {
                None => out.push_str("/>\n"),
                Some((message, body)) => {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        esc(message),
                        esc(body)
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
