//! Index refresh in process: files added, edited or deleted after start-up
//! are reflected on the next query without a restart.

use crate::common::{assert_honest_answer, query, write_file};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_types::{ContextQuery, ContextQueryResult};

fn ask(provider: &DocsProvider, goal: &str) -> ContextQueryResult {
    let q = query(goal, 100, 1_000_000);
    let typed: ContextQuery = serde_json::from_value(q.clone()).unwrap();
    let result = provider.query(&typed).unwrap();
    assert_honest_answer(&result, &q);
    result
}

#[test]
fn added_edited_and_deleted_files_show_up_on_the_next_query() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "a.md", "# Alpha\n\nalpha one\n");
    let provider = DocsProvider::open(DocsConfig::new(dir.path())).unwrap();
    assert_eq!(ask(&provider, "alpha").frames.len(), 1);

    write_file(dir.path(), "sub/b.md", "# Alpha two\n\nalpha\n");
    let ids: Vec<String> = ask(&provider, "alpha")
        .frames
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert!(ids.contains(&"sub/b.md#alpha-two".to_owned()), "{ids:?}");

    write_file(dir.path(), "a.md", "# Alpha\n\nalpha edited, and longer\n");
    let a = ask(&provider, "alpha")
        .frames
        .into_iter()
        .find(|f| f.id == "a.md#alpha")
        .unwrap();
    assert!(a.content.unwrap().contains("edited"));

    std::fs::remove_file(dir.path().join("a.md")).unwrap();
    let ids: Vec<String> = ask(&provider, "alpha")
        .frames
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, ["sub/b.md#alpha-two"]);
    assert_eq!(provider.scan_report().files, 1);
}
