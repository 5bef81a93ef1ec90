//! JUnit XML, the format CI systems read test results from, written by quick-junit: one test
//! suite per phase, one case per check; a failure carries its message, a `type`, and in its body
//! the replay command and the Mermaid diagram of a new violation.

use std::time::Duration;

use anyhow::Result;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::output::{Case, Kind};

pub fn render(cases: &[Case]) -> Result<String> {
    let mut kinds: Vec<Kind> = Vec::new();
    for c in cases {
        if !kinds.contains(&c.kind) {
            kinds.push(c.kind);
        }
    }
    let mut report = Report::new("braid ci");
    for kind in kinds {
        let mut suite = TestSuite::new(kind.name());
        for c in cases.iter().filter(|c| c.kind == kind) {
            let mut case = TestCase::new(c.name.as_str(), status(c));
            case.set_classname(format!("braid.{}", kind.name()))
                .set_time(Duration::from_secs_f64(c.seconds));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    Ok(report.to_string()?)
}

fn status(c: &Case) -> TestCaseStatus {
    if c.ok {
        return TestCaseStatus::success();
    }
    let mut body = c.message.clone();
    if let Some(file) = &c.replay {
        body += &format!("\nreproduce: braid replay {file}");
    }
    if let Some(v) = &c.new_violation {
        body += &format!(
            "\n\n{}: {}\n\n```mermaid\n{}```\n",
            v.invariant, v.message, v.mermaid
        );
    }
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status
        .set_message(c.message.as_str())
        .set_type(c.kind.failure_type())
        .set_description(body);
    status
}
