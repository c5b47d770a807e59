//! The harness of the docs provider's tests: the testkit's pipe harness and
//! docs fixture (shared with `cgp serve docs`'s tests), and this crate's
//! binary.

pub use contextgraph_testkit::docs_fixture::{
    assert_honest_answer, docs_fixture, start, write_file,
};
pub use contextgraph_testkit::pipe::{frames_of, identity, query, Session, EXIT_DEADLINE};
pub use contextgraph_testkit::schema_errors;

/// The docs provider binary under test.
pub const DOCS_BIN: &str = env!("CARGO_BIN_EXE_contextgraph-provider-docs");
