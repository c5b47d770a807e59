//! Anchors bias relevance (in process): sections of a focal file, or that
//! document a focal file, rank above equally matching others.

use crate::common::{docs_fixture, query};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_sdk::{path_to_file_uri, Provider};
use contextgraph_types::ContextQuery;
use serde_json::json;

fn top(provider: &DocsProvider, anchors: &[String]) -> String {
    let mut q = query("seconds connections settings attempts", 10, 100_000);
    q["anchors"] = json!(anchors);
    let q: ContextQuery = serde_json::from_value(q).unwrap();
    provider.query(&q).unwrap().frames[0].id.clone()
}

#[test]
fn a_focal_file_or_a_file_a_section_documents_lifts_its_sections_to_the_top() {
    let dir = docs_fixture();
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    let unanchored = top(&provider, &[]);
    assert_eq!(unanchored, "README.md#configuration");

    let timeouts = top(&provider, &["docs/timeouts.md".to_owned()]);
    assert!(timeouts.starts_with("docs/timeouts.md#"), "{timeouts}");

    let config = std::fs::canonicalize(dir.path().join("src/config.rs")).unwrap();
    let uri = path_to_file_uri(&config).unwrap();
    assert_eq!(top(&provider, &[uri]), "docs/retry.md#retry-policy");
}
