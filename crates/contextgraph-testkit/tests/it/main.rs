//! The testkit's own tests, in one test binary: the fixtures it serves are
//! what they claim to be, and the schema check can fail.

mod fixtures;
