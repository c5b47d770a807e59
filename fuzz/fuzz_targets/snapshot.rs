//! `snapshot`: see `contextgraph_search::fuzz::snapshot` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextgraph_search::fuzz::snapshot(data));
