//! The testkit's own tests, in one test binary: the fixtures it serves are
//! what they claim to be, the schema check can fail, and ARCHITECTURE.md
//! matches the workspace, and every crate carries its registry metadata.

mod architecture;
mod fixtures;
mod publish_metadata;
