//! `as_of` in process: no frame is dated after the pinned instant. Frames
//! are dated by their file's mtime (`recorded_at`), so pinning between two
//! files' mtimes serves only the older one.

use std::time::{Duration, SystemTime};

use crate::common::{assert_honest_answer, query, write_file};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_types::{ContextQuery, Timestamp};
use serde_json::json;

fn set_mtime(path: &std::path::Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

#[test]
fn as_of_serves_only_sections_of_files_not_modified_after_the_pin() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "old.md", "# Retry old\n\nretry\n");
    write_file(dir.path(), "new.md", "# Retry new\n\nretry\n");
    let day = Duration::from_secs(86_400);
    let now = SystemTime::now();
    set_mtime(&dir.path().join("old.md"), now - 10 * day);
    set_mtime(&dir.path().join("new.md"), now - day);
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();

    let mut pinned = query("retry", 10, 10_000);
    pinned["as_of"] = json!(Timestamp::from_system_time(now - 5 * day).to_wire());
    let typed: ContextQuery = serde_json::from_value(pinned.clone()).unwrap();
    let result = provider.query(&typed).unwrap();
    assert_honest_answer(&result, &pinned);
    let ids: Vec<&str> = result.frames.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["old.md#retry-old"]);
    assert!(
        !result.truncated,
        "a frame from after the pin is not a candidate left out"
    );

    let mut before_everything = query("retry", 10, 10_000);
    before_everything["as_of"] = json!(Timestamp::from_system_time(now - 20 * day).to_wire());
    let typed: ContextQuery = serde_json::from_value(before_everything).unwrap();
    assert!(provider.query(&typed).unwrap().frames.is_empty());
}
