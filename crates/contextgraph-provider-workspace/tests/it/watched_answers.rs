//! A server's answers while its watcher is trusted (issue 29): the scan of
//! the whole tree is skipped, yet an edit racing a query is never served
//! with its old bytes, and a cited file found behind the index makes the
//! answer be made again after a scan.

use std::time::{Duration, Instant};

use contextgraph_provider_workspace::serve::keep_fresh;

use crate::common::{ask, q, Fixture};

#[test]
fn an_edit_racing_a_query_is_never_served_with_its_old_bytes() {
    let f = Fixture::new();
    f.write("src/racer.rs", "pub fn racing_marker_0() -> u32 { 0 }\n");
    let (p, _watch) = keep_fresh(f.open());
    p.refresh().expect("refresh");
    let until = Instant::now() + Duration::from_secs(20);
    while p.workspace().scan_needed().is_some() {
        assert!(Instant::now() < until, "the watcher never became current");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut found_at_once = 0;
    for k in 1..=20u32 {
        let old = format!("racing_marker_{}", k - 1);
        let new = format!("racing_marker_{k}");
        f.write(
            "src/racer.rs",
            &format!("pub fn {new}() -> u32 {{ {k} }}\n"),
        );
        // At once: the watcher may not have heard of the edit yet.
        let result = ask(&p, &q(&format!("{old} {new}")));
        for frame in &result.frames {
            if frame.id.starts_with("src/racer.rs#") {
                let content = frame.content.as_deref().unwrap_or_default();
                assert!(
                    !content.contains(&old),
                    "round {k}: the old bytes were served: {content:?}"
                );
                if content.contains(&new) {
                    found_at_once += 1;
                }
            }
        }
    }
    eprintln!("edits found by the query right after them: {found_at_once} of 20");
}

#[test]
fn a_distrusted_watcher_means_every_answer_scans() {
    let f = Fixture::new();
    let (p, watch) = keep_fresh(f.open());
    p.refresh().expect("refresh");
    let watch = watch.expect("the watcher starts here");
    watch.simulate_error("the inotify watch limit was reached");
    // A file the watcher will not report (it is distrusted): the scan finds it.
    f.write("src/unwatched.rs", "pub fn hidden_okapi() {}\n");
    let result = ask(&p, &q("hidden_okapi"));
    assert!(
        result
            .frames
            .iter()
            .any(|fr| fr.id.starts_with("src/unwatched.rs#")),
        "{:?}",
        result.frames.iter().map(|fr| &fr.id).collect::<Vec<_>>()
    );
}
