//! The shape of the common JUnit schema (junit-10.xsd, the Ant/Jenkins format), checked element
//! by element: which elements may appear where, which attributes each may and must carry, and
//! that the counts add up.

use roxmltree::{Document, Node};

fn attrs_allowed(n: Node, allowed: &[&str], required: &[&str]) {
    for a in n.attributes() {
        assert!(
            allowed.contains(&a.name()),
            "<{}> has attribute {} (allowed: {allowed:?})",
            n.tag_name().name(),
            a.name()
        );
    }
    for r in required {
        assert!(
            n.attribute(*r).is_some(),
            "<{}> lacks required attribute {r}",
            n.tag_name().name()
        );
    }
}

fn count(n: Node, attr: &str) -> usize {
    n.attribute(attr)
        .unwrap_or_else(|| panic!("{attr}"))
        .parse()
        .unwrap_or_else(|_| panic!("{attr} is a count"))
}

fn elements<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(|c| c.is_element())
}

/// Validates `xml` against junit-10's shape; returns the number of test cases.
pub fn validate(xml: &str) -> usize {
    let doc = Document::parse(xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    attrs_allowed(
        root,
        &["name", "time", "tests", "failures", "disabled", "errors"],
        &[],
    );
    let mut total = 0;
    let mut total_failures = 0;
    for suite in elements(root) {
        assert_eq!(suite.tag_name().name(), "testsuite");
        attrs_allowed(
            suite,
            &[
                "name",
                "tests",
                "failures",
                "errors",
                "time",
                "disabled",
                "skipped",
                "timestamp",
                "hostname",
                "id",
                "package",
            ],
            &["name", "tests", "failures", "errors"],
        );
        let mut order = 0;
        let mut cases = 0;
        let mut failures = 0;
        for child in elements(suite) {
            let rank = match child.tag_name().name() {
                "properties" => 0,
                "testcase" => 1,
                "system-out" => 2,
                "system-err" => 3,
                other => panic!("<testsuite> holds <{other}>"),
            };
            assert!(rank >= order, "<testsuite> children out of order");
            order = rank;
            if rank != 1 {
                continue;
            }
            cases += 1;
            attrs_allowed(
                child,
                &["name", "assertions", "time", "classname", "status"],
                &["name", "classname"],
            );
            if let Some(t) = child.attribute("time") {
                assert!(t.parse::<f64>().is_ok(), "time {t}");
            }
            for inner in elements(child) {
                match inner.tag_name().name() {
                    "failure" | "error" => {
                        attrs_allowed(inner, &["message", "type"], &["message", "type"]);
                        assert!(elements(inner).next().is_none(), "text only");
                        failures += usize::from(inner.tag_name().name() == "failure");
                    }
                    "skipped" | "system-out" | "system-err" => {}
                    other => panic!("<testcase> holds <{other}>"),
                }
            }
        }
        assert_eq!(count(suite, "tests"), cases, "tests attribute");
        assert_eq!(count(suite, "failures"), failures, "failures attribute");
        total += cases;
        total_failures += failures;
    }
    if root.attribute("tests").is_some() {
        assert_eq!(count(root, "tests"), total);
    }
    if root.attribute("failures").is_some() {
        assert_eq!(count(root, "failures"), total_failures);
    }
    total
}
