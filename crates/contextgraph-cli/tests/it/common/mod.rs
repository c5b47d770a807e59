//! Helpers shared by several test modules.
#![allow(dead_code)] // each module uses a different subset

pub mod inspect;
pub mod serve_http;
