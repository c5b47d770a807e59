//! The kept inputs of the `anchor` and `snapshot` fuzz targets
//! (`fuzz/seeds/<target>`, `fuzz/regressions/<target>`), replayed through
//! the bodies the libFuzzer programs run; and the writer of the snapshot
//! seeds.

use contextgraph_search::fuzz;
use contextgraph_search::Workspace;
use contextgraph_testkit::fuzz_replay::{fuzz_dir, replay};

use crate::common::{options, repo, write_files};

/// Fails while finding N1 of issue 26 is open: the kept input
/// `fuzz/regressions/anchor/N1-non-ascii-anchor-panics` panics in
/// `uri.rs` (`base[..5]` on a `&str`). The trust-boundary fix makes it pass.
#[test]
fn anchor_inputs_replay_without_a_broken_property() {
    replay("anchor", fuzz::anchor);
}

#[test]
fn snapshot_inputs_replay_without_a_broken_property() {
    replay("snapshot", fuzz::snapshot);
}

/// The store's header with the workspace path replaced by the `snapshot`
/// target's root (magic, format version, `u32` length, path).
fn rebased(file: &[u8]) -> Vec<u8> {
    let len = u32::from_le_bytes(file[12..16].try_into().expect("a header")) as usize;
    let mut out = file[..12].to_vec();
    out.extend_from_slice(&(fuzz::SNAPSHOT_ROOT.len() as u32).to_le_bytes());
    out.extend_from_slice(fuzz::SNAPSHOT_ROOT.as_bytes());
    out.extend_from_slice(&file[16 + len..]);
    out
}

/// Writes `fuzz/seeds/snapshot/`: a real index of the test repository, and
/// the same with a journal after an edit. Run by hand when the format
/// changes: `cargo test -p contextgraph-search write_snapshot_seeds -- --ignored`.
#[test]
#[ignore = "writes the snapshot fuzz seeds; run by hand when the index format changes"]
fn write_snapshot_seeds() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache directory");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    let find = |name: &str| {
        walk(cache.path())
            .into_iter()
            .find(|p| p.file_name().is_some_and(|n| n == name))
    };
    let snapshot = std::fs::read(find("index.bin").expect("a snapshot")).expect("read");
    write_files(dir.path(), &[("src/extra.rs", "pub fn extra_step() {}\n")]);
    ws.refresh().expect("refresh");
    let seeds = fuzz_dir().join("seeds/snapshot");
    std::fs::write(seeds.join("index"), rebased(&snapshot)).expect("write seed");
    if let Some(journal) = find("journal.bin") {
        let journal = std::fs::read(journal).expect("read");
        let mut both = rebased(&snapshot);
        both.extend_from_slice(&rebased(&journal));
        std::fs::write(seeds.join("index-and-journal"), both).expect("write seed");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
