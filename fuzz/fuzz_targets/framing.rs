//! `framing`: see `contextgraph_codec::fuzz::framing` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextgraph_codec::fuzz::framing(data));
