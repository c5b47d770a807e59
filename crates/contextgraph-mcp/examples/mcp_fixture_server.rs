//! A small MCP server serving a folder's files as resources, over stdio: the
//! peer `cgp bridge mcp` is tested against, and a demo of what it bridges.
//!
//! ```sh
//! cargo run -p contextgraph-mcp --example mcp_fixture_server -- ./docs
//! cgp bridge mcp -- target/debug/examples/mcp_fixture_server ./docs
//! ```
//!
//! Every regular file directly in the folder is one resource (`file://`
//! URI, MIME type by extension), read afresh on every `resources/read` so
//! edits show up in `verify`; `memo://fixture/about` is one more resource
//! that lives only in the server. Flags for tests of failure handling:
//! `--exit-on-read` exits the process on the first read (a crash);
//! `--hang-on-read` never answers a read (a hung server);
//! `--page-size N` paginates the listing.

include!("../fixtures/mcp_fixture_server.rs");
