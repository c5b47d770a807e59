//! `fence`: see `contextgraph_compose::fuzz::fence` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextgraph_compose::fuzz::fence(data));
