//! The kept inputs of the `config` fuzz target (`fuzz/seeds/config`,
//! `fuzz/regressions/config`), replayed through the body the libFuzzer
//! program runs.

use contextgraph_config::fuzz;
use contextgraph_testkit::fuzz_replay::replay;

#[test]
fn config_inputs_replay_without_a_broken_property() {
    replay("config", fuzz::config);
}
