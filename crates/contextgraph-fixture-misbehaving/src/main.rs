//! `contextgraph-misbehaving-provider`: a CGP provider that breaks one
//! guarantee on purpose (see `--help` and [`contextgraph_fixture_misbehaving::program`]).

fn main() -> std::process::ExitCode {
    contextgraph_fixture_misbehaving::program::main()
}
