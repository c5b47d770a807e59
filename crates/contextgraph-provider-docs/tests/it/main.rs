//! The integration tests of the docs provider, in one test binary (one link
//! instead of one per file); one module per behaviour.

mod common;

mod anchors;
mod as_of;
mod budget;
mod correlation;
mod frame_honesty;
mod handshake;
mod kinds_filter;
mod malformed_input;
mod markdown_sections;
mod refresh;
mod scoring;
mod shutdown;
mod suite;
mod suite_no_frames_is_skipped;
mod suite_strict;
mod verify;
mod walk_rules;
