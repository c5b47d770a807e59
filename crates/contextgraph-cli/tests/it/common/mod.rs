//! Helpers shared by several test modules.
#![allow(dead_code)] // each module uses a different subset

pub mod checkout;
pub mod http;
pub mod inspect;
pub mod load;
pub mod nginx;
pub mod pty;
pub mod serve_http;
pub mod shards;
