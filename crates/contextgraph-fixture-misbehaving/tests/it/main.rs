//! The misbehaving fixture's integration tests, one test binary for the
//! crate: one module per behaviour (each mode against its rule, the normal
//! mode against the rules it keeps), helpers in `common`. Every test drives
//! the fixture's binary as a child process, so none needs its own process.

mod common;

mod cli;
mod dir_corpus;
mod killed;
mod masking;
mod misbehaving_baseline;
mod misbehaving_budget;
mod misbehaving_correlation;
mod misbehaving_filters;
mod misbehaving_frames;
mod misbehaving_handshake;
mod misbehaving_readings;
mod misbehaving_robustness;
mod misbehaving_transport;
mod misbehaving_verify;
mod mode_catalogue;
mod normal_budget;
mod normal_correlation;
mod normal_filters;
mod normal_frames;
mod normal_handshake;
mod normal_robustness;
mod normal_shutdown;
mod normal_verify;
mod suite;
mod suite_catches_every_mode;
mod suite_normal_mode_strict;
mod suite_readings;
