//! A small MCP server serving a folder's files as resources, over stdio: the
//! peer the bridge is tested against, and a demo of what it bridges (the
//! program lives in `contextgraph_testkit::mcp_fixture_server`, shared with
//! the `cgp bridge mcp` tests).
//!
//! ```sh
//! cargo run -p contextgraph-mcp --example mcp_fixture_server -- ./docs
//! cgp bridge mcp -- target/debug/examples/mcp_fixture_server ./docs
//! ```
//!
//! Flags for tests of failure handling: `--exit-on-read` exits the process
//! on the first read (a crash); `--hang-on-read` never answers a read (a
//! hung server); `--page-size N` paginates the listing.

fn main() {
    contextgraph_testkit::mcp_fixture_server::main()
}
