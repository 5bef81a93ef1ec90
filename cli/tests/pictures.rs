//! Pictures that fit their text: SVG boxes as wide as their text at ~7.2 px per character, the
//! "preempts" tag clear of the step's labels, an HTML page that scrolls rather than cut lanes
//! off, and a compact Mermaid form with one participant per task. Pictures that explain: the
//! model's phases as spans, each message linked from its queue to the wire, the violation's two
//! frames highlighted, and a deadlock's wait-for (who holds what each task waits on).

/// The repository: scenarios/, seeds/ and the target directory the commands run in.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

use std::path::Path;
use std::process::Command;

const BIND_RACE: &str = "seeds/broker-bind-race/delivery-order-55690cf6.json";
const ACCESS_RACE: &str = "seeds/broker-unbound-behind-access/delivery-order-d1cef62c.json";
const DEADLOCK: &str = "seeds/pubsub-full-queue-blocking-retain/deadlock-bb24bc35.json";

fn replay(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_braid"))
        .arg("replay")
        .args(args)
        .current_dir(REPO)
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

fn of_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .collect()
}

/// The text of an element's `<title>`.
fn title(n: roxmltree::Node) -> String {
    n.children()
        .find(|c| c.has_tag_name("title"))
        .and_then(|t| t.text())
        .unwrap_or_default()
        .to_string()
}

/// Mermaid's `rect` blocks close exactly as often as they open.
fn balanced(m: &str) -> bool {
    let opens = m
        .lines()
        .filter(|l| l.trim_start().starts_with("rect "))
        .count();
    opens == m.lines().filter(|l| l.trim() == "end").count()
}

#[test]
fn the_bind_race_shows_the_phase_the_links_and_the_two_frames() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, _) = pictures(BIND_RACE, dir.path());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // register_session..bind: a span on the handler's lane, labelled.
    let labels = of_class(&doc, "phase-label");
    assert_eq!(labels.len(), 1, "{svg}");
    assert_eq!(labels[0].text(), Some("register_session..bind"));
    let span = of_class(&doc, "phase")[0];
    let header = doc
        .descendants()
        .find(|n| n.text() == Some("handler:c"))
        .unwrap();
    let (left, width) = (num(span, "x"), num(span, "width"));
    assert!(left < num(header, "x") && num(header, "x") < left + width);
    // The publisher's route of p1#1 happens inside the span: that is the race.
    assert!(num(span, "height") >= 5.0 * 22.0);
    // Each message from its queue to the wire.
    let links: Vec<String> = of_class(&doc, "link").into_iter().map(title).collect();
    assert!(
        links
            .iter()
            .any(|t| t.starts_with("p1#1: enqueued at step 4")),
        "{links:?}"
    );
    assert!(
        links.iter().any(|t| t.starts_with("restart#1: enqueued")),
        "{links:?}"
    );
    // The two frames of the violation, outlined: p1#1 on the wire, then restart#1.
    let frames = of_class(&doc, "about");
    assert_eq!(frames.len(), 2, "{svg}");
    let frame_text = |rect: roxmltree::Node| {
        let y = num(rect, "y");
        doc.descendants()
            .filter(|n| n.attribute("font-weight") == Some("bold") && n.has_tag_name("text"))
            .find(|n| num_or(*n, "y").is_some_and(|ty| ty > y && ty < y + 22.0))
            .and_then(|n| n.text())
            .unwrap()
            .to_string()
    };
    assert!(frame_text(frames[0]).starts_with("wire: PUBLISH p1#1"));
    assert!(frame_text(frames[1]).starts_with("wire: PUBLISH restart#1"));

    let mermaid = replay(&[BIND_RACE, "--mermaid"]);
    assert!(mermaid.contains("Note over L1: phase register_session..bind begins"));
    assert!(
        mermaid.contains("send (p1#35;1 enqueued at step 4)"),
        "{mermaid}"
    );
    assert_eq!(mermaid.matches("rect rgb(255, 205, 210)").count(), 2);
    assert!(balanced(&mermaid), "{mermaid}");
    let compact = replay(&[BIND_RACE, "--mermaid", "--compact"]);
    assert!(
        compact.contains("PUBLISH p1#35;1 packet 2 -> c (enqueued at step 4) [violation's frame]")
    );
    assert!(balanced(&compact), "{compact}");
}

#[test]
fn a_deadlock_picture_shows_who_waits_on_what_and_who_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, html) = pictures(DEADLOCK, dir.path());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(of_class(&doc, "wait-for").len(), 1);
    let waits: Vec<&str> = of_class(&doc, "wait")
        .into_iter()
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(
        waits,
        [
            "subscriber waits on lock c2.lifecycle: held by conn:c2",
            "conn:c2 waits on send pubsub.commands: full: 1 of 1"
        ]
    );
    // The section lies below every row, inside the picture.
    let section = of_class(&doc, "wait-for")[0];
    let height: f64 = doc
        .root_element()
        .attribute("height")
        .unwrap()
        .parse()
        .unwrap();
    assert!(num(section, "y") + num(section, "height") <= height);
    assert!(html.contains("wait-for at the deadlock:"));

    let text = replay(&[DEADLOCK]);
    assert!(
        text.contains("wait-for at the deadlock:\n  subscriber waits on lock c2.lifecycle: held by conn:c2\n  conn:c2 waits on send pubsub.commands: full: 1 of 1"),
        "{text}"
    );
    let mermaid = replay(&[DEADLOCK, "--mermaid"]);
    assert!(mermaid.contains("--x"), "{mermaid}");
    assert!(
        mermaid.contains("waits: lock c2.lifecycle: held by conn:c2"),
        "{mermaid}"
    );
    let compact = replay(&[DEADLOCK, "--mermaid", "--compact"]);
    assert!(
        compact.contains("waits: lock c2.lifecycle: held by conn:c2"),
        "{compact}"
    );
}
