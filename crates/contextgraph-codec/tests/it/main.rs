//! The integration tests of `contextgraph-codec`, in one test binary (one
//! link instead of one per file); one module per behaviour, helpers in
//! `common`.

// The async reader exists only with the `tokio` feature.
#[cfg(feature = "tokio")]
mod async_framing;
mod buffer_bounds;
mod common;
mod envelope_decode;
mod envelope_reader;
mod envelope_roundtrip_prop;
mod envelope_wire_data;
mod framing;
mod fuzz_replay;
