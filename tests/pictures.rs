//! Pictures that fit their text: SVG boxes as wide as their text at ~7.2 px per character, the
//! "preempts" tag clear of the step's labels, an HTML page that scrolls rather than cut lanes
//! off, and a compact Mermaid form with one participant per task.

use std::path::Path;
use std::process::Command;

const BIND_RACE: &str = "seeds/broker-bind-race/delivery-order-55690cf6.json";
const ACCESS_RACE: &str = "seeds/broker-unbound-behind-access/delivery-order-d1cef62c.json";

fn replay(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("replay")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn pictures(seed: &str, dir: &Path) -> (String, String) {
    let (svg, html) = (dir.join("p.svg"), dir.join("p.html"));
    replay(&[
        seed,
        "--svg",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    (
        std::fs::read_to_string(svg).unwrap(),
        std::fs::read_to_string(html).unwrap(),
    )
}

fn num(n: roxmltree::Node, attr: &str) -> f64 {
    n.attribute(attr).unwrap().parse().unwrap()
}

#[test]
fn event_boxes_and_lanes_are_as_wide_as_their_text() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [BIND_RACE, ACCESS_RACE] {
        let (svg, _) = pictures(seed, dir.path());
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let elements: Vec<_> = doc.descendants().filter(|n| n.is_element()).collect();
        let mut events = 0;
        for pair in elements.windows(2) {
            let (rect, text) = (pair[0], pair[1]);
            // An event: a green box, then its bold text.
            if rect.attribute("fill") != Some("#e6f4ea") {
                continue;
            }
            events += 1;
            let chars = text.text().unwrap().chars().count() as f64;
            let (x, w) = (num(rect, "x"), num(rect, "width"));
            assert!(num(text, "x") >= x, "{seed}");
            assert!(
                num(text, "x") + 7.2 * chars <= x + w,
                "{seed}: {chars} characters overflow a {w} px box"
            );
        }
        assert!(events > 3, "{seed}");
        // Lane headers hold their names.
        for pair in elements.windows(2) {
            let (rect, text) = (pair[0], pair[1]);
            if num_or(rect, "y") != Some(46.0) || text.tag_name().name() != "text" {
                continue;
            }
            let chars = text.text().unwrap().chars().count() as f64;
            assert!(7.2 * chars <= num(rect, "width"), "{seed}: lane header");
        }
    }
}

fn num_or(n: roxmltree::Node, attr: &str) -> Option<f64> {
    n.attribute(attr)?.parse().ok()
}

#[test]
fn the_preempts_tag_stays_clear_of_the_steps_labels() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, _) = pictures(BIND_RACE, dir.path());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let elements: Vec<_> = doc.descendants().filter(|n| n.is_element()).collect();
    let tags: Vec<_> = elements
        .iter()
        .filter(|n| n.text() == Some("preempts"))
        .collect();
    assert_eq!(tags.len(), 1, "the bind race's one preemption");
    let tag = tags[0];
    // The tag ends left of the task's dot; the step's labels start right of it.
    assert_eq!(tag.attribute("text-anchor"), Some("end"));
    let dot = elements
        .iter()
        .skip_while(|n| n.id() != tag.id())
        .find(|n| n.has_tag_name("circle"))
        .unwrap();
    assert!(num(*tag, "x") < num(*dot, "cx") - 4.0);
    let label = elements
        .iter()
        .skip_while(|n| n.id() != dot.id())
        .find(|n| n.has_tag_name("text"))
        .unwrap();
    assert_eq!(label.text(), Some("start"));
    assert!(num(*label, "x") > num(*dot, "cx"));
}

#[test]
fn the_html_page_scrolls_instead_of_cutting_lanes_off() {
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = pictures(ACCESS_RACE, dir.path());
    assert!(
        html.contains(".picture{max-width:100%;overflow-x:auto"),
        "{html}"
    );
    let open = html
        .find("<div class=\"picture\">")
        .expect("a scroll container");
    let svg = html.find("<svg").unwrap();
    let close = html[svg..].find("</svg>").unwrap() + svg;
    assert!(
        open < svg
            && html[close..]
                .trim_start_matches("</svg>\n")
                .starts_with("</div>")
    );
}

#[test]
fn the_compact_mermaid_form_has_one_participant_per_task() {
    let full = replay(&[ACCESS_RACE, "--mermaid"]);
    let compact = replay(&[ACCESS_RACE, "--mermaid", "--compact"]);
    let participants = |m: &str| m.lines().filter(|l| l.contains("participant ")).count();
    assert!(participants(&full) >= 10, "{full}");
    assert_eq!(
        participants(&compact),
        5,
        "root, handler, two publishers, peer: {compact}"
    );
    assert!(compact.contains("preempts"));
    assert!(compact.contains("delivery-order") || compact.contains("came after"));
    assert!(compact.lines().count() < full.lines().count() / 2);
}
