//! Q1 over real pipes: a query for kinds this provider does not serve gets
//! zero frames; a query naming `doc` among others gets only docs.

use crate::common::{assert_honest_answer, frames_of, query, start, DOCS_BIN};
use contextgraph_types::FrameKind;
use serde_json::json;

#[test]
fn q1_a_query_for_only_symbol_gets_zero_frames_and_a_mixed_query_only_docs() {
    let (_dir, mut session) = start(DOCS_BIN, &[]);

    let mut symbols = query("retry policy", 5, 4000);
    symbols["kinds"] = json!(["symbol"]);
    let result = frames_of(&session.query("sym", &symbols), "sym");
    assert!(result.frames.is_empty(), "{result:?}");
    assert!(
        !result.truncated,
        "nothing of the requested kind was left out"
    );

    let mut mixed = query("retry policy", 5, 4000);
    mixed["kinds"] = json!(["symbol", "doc"]);
    let result = frames_of(&session.query("mixed", &mixed), "mixed");
    assert!(!result.frames.is_empty());
    assert!(result.frames.iter().all(|f| f.kind == FrameKind::Doc));
    assert_honest_answer(&result, &mixed);
}
