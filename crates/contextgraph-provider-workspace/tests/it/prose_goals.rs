//! Goals written as prose ("where are grants stored?") find the code they
//! are about: inflected words match the code's own forms, the file's path
//! counts as evidence, and test code repeating the words of what it tests
//! does not outrank the thing itself unless the goal asks for tests.

use crate::common::{ask, ids, q, Fixture};

fn first_file(p: &contextgraph_provider_workspace::WorkspaceProvider, goal: &str) -> String {
    let r = ask(p, &q(goal));
    let got = ids(&r);
    got.first()
        .map(|id| id.split('#').next().unwrap_or_default().to_owned())
        .unwrap_or_else(|| panic!("no frames for {goal:?}"))
}

#[test]
fn inflected_goal_words_match_the_codes_own_forms() {
    let f = Fixture::empty();
    f.write(
        "src/ledger.rs",
        "/// Persist one grant.\npub fn store(grant: &str) -> usize {\n    grant.len()\n}\n",
    );
    // Holds one of the goal's words exactly as written, and nothing else.
    f.write(
        "src/cache.rs",
        "/// Values are stored in memory only.\npub fn remember(value: u32) -> u32 {\n    value\n}\n",
    );
    let p = f.open();
    assert_eq!(
        first_file(&p, "where are grants stored?"),
        "src/ledger.rs",
        "`grants` matches `grant` and `stored` matches `store`: both of the goal's words"
    );
}

const AUDIT_RS: &str = "/// Checks that an answer stays within the token budget it was given.\n\
pub fn check_budget(used: u32, budget: u32) -> bool {\n    used <= budget\n}\n";

const AUDIT_TEST_RS: &str = "/// The token budget check rejects an answer over its token budget.\n\
#[test]\nfn check_budget_rejects_an_answer_over_the_token_budget() {\n    \
let budget = 10; // token budget\n    assert!(!check_budget(11, budget), \"over the token budget\");\n}\n";

#[test]
fn test_code_ranks_below_the_code_it_tests_unless_tests_are_asked_for() {
    let f = Fixture::empty();
    f.write("src/audit.rs", AUDIT_RS);
    f.write("tests/test_audit.rs", AUDIT_TEST_RS);
    let p = f.open();
    assert_eq!(
        first_file(&p, "how is the token budget checked?"),
        "src/audit.rs",
        "the test repeats the goal's words more often, but the goal asks how, not for tests"
    );
    assert_eq!(
        first_file(&p, "which test covers the token budget check?"),
        "tests/test_audit.rs",
        "a goal asking for tests gets them first"
    );
}

#[test]
fn a_file_whose_path_names_the_goals_words_ranks_first_among_equals() {
    let f = Fixture::empty();
    // Same section, no symbol names to match (a Rust symbol's qualified
    // name already carries its module path); the decoy even repeats one
    // goal word once more.
    f.write(
        "docs/aaa/render.md",
        "# Saving\n\nWrites records to disk: records.\n",
    );
    f.write(
        "docs/consent/store.md",
        "# Saving\n\nWrites the records to disk.\n",
    );
    let p = f.open();
    assert_eq!(
        first_file(&p, "how does the consent store write records to disk?"),
        "docs/consent/store.md"
    );
}
