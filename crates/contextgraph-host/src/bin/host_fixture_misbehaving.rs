//! Test support, built only with the `test-fixture` feature (which this
//! crate's own tests turn on): the misbehaving provider
//! (`contextgraph-fixture-misbehaving`) as a binary of this package, so the
//! host's integration tests find it through `CARGO_BIN_EXE_*` instead of a
//! nested `cargo build`. The host library never uses the fixture.

fn main() -> std::process::ExitCode {
    contextgraph_fixture_misbehaving::program::main()
}
