//! H4 over real pipes: several queries in flight at once, each answered
//! exactly once with its own id and its own answer.

use std::collections::HashMap;

use crate::common::{frames_of, query, start, DOCS_BIN};
use serde_json::json;

#[test]
fn h4_queries_in_flight_together_are_each_answered_with_their_own_id() {
    let (_dir, mut session) = start(DOCS_BIN, &[]);
    let asks = [
        ("q-retry", "retry policy", "docs/retry.md#retry-policy"),
        (
            "q-timeouts",
            "request timeouts",
            "docs/timeouts.md#timeouts",
        ),
        ("q-logging", "logging verbosity", "docs/logging.txt#logging"),
    ];
    // All three are written before any reply is read.
    for (id, goal, _) in asks {
        session.send(&json!({"type": "query", "id": id, "query": query(goal, 3, 4000)}));
    }
    let mut best: HashMap<String, String> = HashMap::new();
    for _ in asks {
        let reply = session.recv();
        let id = reply["id"]
            .as_str()
            .expect("H4: the reply carries an id")
            .to_owned();
        let result = frames_of(&reply, &id);
        let top = result
            .frames
            .first()
            .map(|f| f.id.clone())
            .unwrap_or_default();
        assert!(
            best.insert(id.clone(), top).is_none(),
            "{id} answered twice"
        );
    }
    for (id, _, expected_top) in asks {
        assert_eq!(
            best.get(id).map(String::as_str),
            Some(expected_top),
            "answer to {id}"
        );
    }
}
