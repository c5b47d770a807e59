//! The kept inputs of the `session` fuzz target (`fuzz/seeds/session`,
//! `fuzz/regressions/session`), replayed through the body the libFuzzer
//! program runs.

use contextgraph_engine::fuzz;
use contextgraph_testkit::fuzz_replay::replay;

#[test]
fn session_inputs_replay_without_a_broken_property() {
    replay("session", fuzz::session);
}
