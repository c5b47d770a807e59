//! Integration tests of the history provider over repositories the tests
//! build with libgit2.

mod anchors;
mod degrade;
mod frames;
mod index_file;
mod localization;
mod refusals;
mod repo;
mod verify;
