//! The search library's integration tests, one module per behaviour, in one
//! test binary. Helpers shared by the modules are in [`common`].

mod common;

mod freshness;
mod fuzz_replay;
mod languages;
mod search_api;
mod semantic;
mod vectors_file;
