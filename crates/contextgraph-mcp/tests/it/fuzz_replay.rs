//! The kept inputs of the `mcp_server` and `mcp_bridge` fuzz targets
//! (`fuzz/seeds/<target>`, `fuzz/regressions/<target>`), replayed through
//! the bodies the libFuzzer programs run.

use contextgraph_mcp::fuzz;
use contextgraph_testkit::fuzz_replay::replay;

#[test]
fn mcp_server_inputs_replay_without_a_broken_property() {
    replay("mcp_server", fuzz::mcp_server);
}

#[test]
fn mcp_bridge_inputs_replay_without_a_broken_property() {
    replay("mcp_bridge", fuzz::mcp_bridge);
}
