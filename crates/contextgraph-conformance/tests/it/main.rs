//! The provider suite's integration tests, one test binary for the crate:
//! one module per behaviour, fixtures in `common`. The providers under test
//! run as child processes (or an in-test HTTP server), so no test needs a
//! process of its own.

mod common;

mod docs_provider_strict;
mod http_target;
mod misbehaving_modes;
mod no_frames_is_skipped;
mod normal_mode_strict;
