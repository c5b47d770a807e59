//! The kept fuzz inputs of the codec's targets (`fuzz/seeds`,
//! `fuzz/regressions`), replayed through the same bodies the libFuzzer
//! programs run.

use contextgraph_codec::fuzz;
use contextgraph_testkit::fuzz_replay::replay;

#[test]
fn envelope_inputs_replay_without_a_broken_property() {
    replay("envelope", fuzz::envelope);
}

#[test]
fn framing_inputs_replay_without_a_broken_property() {
    replay("framing", fuzz::framing);
}
