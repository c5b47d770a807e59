//! `contextgraph-host-adversary --mode <MODE> --name <NAME>`: one of the
//! host suite's stdio adversaries on stdin/stdout (see the crate's
//! `stdio_adversary` module). This crate's tests spawn it through
//! `CARGO_BIN_EXE_contextgraph-host-adversary`; `cgp inspect host` does not
//! need it (it re-runs itself). Exit codes: 0 after `shutdown` or end of
//! input, 1 when stdout fails, 2 on bad arguments, 3 when `crash-on-query`
//! crashes.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = contextgraph_conformance_host::serve_adversary(std::env::args_os().skip(1));
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
