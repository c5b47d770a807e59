//! The search library's integration tests, one module per behaviour, in one
//! test binary. Helpers shared by the modules are in [`common`].

mod common;

mod freshness;
mod search_api;
mod semantic;
mod vectors_file;
