//! `mcp_server`: see `contextgraph_mcp::fuzz::mcp_server` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextgraph_mcp::fuzz::mcp_server(data));
