//! A corrupt, truncated or version-mismatched stored index is rebuilt from
//! the files, never trusted.

mod common;

use common::{ask, q, Fixture};
use contextgraph_provider_workspace::{IndexSource, WorkspaceProvider};

fn index_files(f: &Fixture) -> (std::path::PathBuf, std::path::PathBuf) {
    let p = f.open();
    let dir = p.stats().cache_dir.expect("cache dir");
    (dir.join("index.bin"), dir.join("journal.bin"))
}

fn assert_rebuilt(f: &Fixture) {
    let (p, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    assert!(matches!(source, IndexSource::Rebuilt { .. }), "{source:?}");
    assert!(common::find(&ask(&p, &q("retry_loop")), "src/net.rs#net::retry_loop").is_some());
    let (_, again) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    assert_eq!(again, IndexSource::Loaded, "the rebuilt index is persisted");
}

#[test]
fn flipped_byte_in_the_snapshot_is_rebuilt() {
    let f = Fixture::new();
    let (snap, _) = index_files(&f);
    let mut bytes = std::fs::read(&snap).expect("read");
    let n = bytes.len();
    bytes[n - 10] ^= 0x55;
    std::fs::write(&snap, bytes).expect("write");
    assert_rebuilt(&f);
}

#[test]
fn truncated_snapshot_and_garbage_journal_are_rebuilt() {
    let f = Fixture::new();
    let (snap, journal) = index_files(&f);
    let bytes = std::fs::read(&snap).expect("read");
    std::fs::write(&snap, &bytes[..bytes.len() / 2]).expect("truncate");
    assert_rebuilt(&f);
    let mut j = std::fs::read(&journal).expect("journal");
    j.extend_from_slice(&[0xff; 40]);
    std::fs::write(&journal, j).expect("write");
    assert_rebuilt(&f);
}

#[test]
fn another_format_version_is_rebuilt() {
    let f = Fixture::new();
    let (snap, _) = index_files(&f);
    let mut bytes = std::fs::read(&snap).expect("read");
    bytes[8] = bytes[8].wrapping_add(1); // format version follows the 8-byte magic
    std::fs::write(&snap, bytes).expect("write");
    assert_rebuilt(&f);
}
