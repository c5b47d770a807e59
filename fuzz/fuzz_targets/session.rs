//! `session`: see `contextgraph_engine::fuzz::session` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextgraph_engine::fuzz::session(data));
