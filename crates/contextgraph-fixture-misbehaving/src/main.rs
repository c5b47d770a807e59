//! `contextgraph-misbehaving-provider`: a CGP provider that breaks one
//! guarantee on purpose (see `--help`). Exit codes: 0 after `shutdown` or end
//! of input, 1 on a failure, 2 on a usage error, 3 when a crash mode crashes.

fn main() -> std::process::ExitCode {
    contextgraph_fixture_misbehaving::program::main()
}
