//! `config`: see `contextgraph_config::fuzz::config` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| contextgraph_config::fuzz::config(data));
