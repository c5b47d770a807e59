//! A corrupt, truncated or version-mismatched stored index is rebuilt from
//! the files, never trusted.

use crate::common::{ask, q, Fixture};
use contextgraph_provider_workspace::{IndexSource, WorkspaceProvider};

fn index_files(f: &Fixture) -> (std::path::PathBuf, std::path::PathBuf) {
    let p = f.open();
    let dir = p.stats().cache_dir.expect("cache dir");
    (dir.join("index.bin"), dir.join("journal.bin"))
}

fn assert_rebuilt(f: &Fixture) {
    let (p, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    assert!(matches!(source, IndexSource::Rebuilt { .. }), "{source:?}");
    assert!(
        crate::common::find(&ask(&p, &q("retry_loop")), "src/net.rs#net::retry_loop").is_some()
    );
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

/// A snapshot in the old format 1 layout (terms as strings inside every
/// chunk record), with a valid checksum, as an older build wrote it.
fn v1_snapshot(root: &str) -> Vec<u8> {
    fn s(out: &mut Vec<u8>, v: &str) {
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v.as_bytes());
    }
    let mut payload = Vec::new();
    payload.extend_from_slice(&1u32.to_le_bytes()); // one file
    s(&mut payload, "src/net.rs");
    payload.extend_from_slice(&[0; 32]); // content hash
    payload.extend_from_slice(&10u64.to_le_bytes()); // size
    payload.extend_from_slice(&[0, 0, 0]); // no mtime, language tag 0, not skipped
    payload.extend_from_slice(&1u32.to_le_bytes()); // one chunk
    payload.push(2); // snippet
    s(&mut payload, "L1-1");
    s(&mut payload, "lines 1-1");
    payload.push(0); // no symbol
    for v in [1u32, 1, 10] {
        payload.extend_from_slice(&v.to_le_bytes()); // start, end, byte_len
    }
    payload.extend_from_slice(&[0; 32]); // region digest
    s(&mut payload, "window");
    payload.push(0); // no outline
    for _ in 0..2 {
        payload.extend_from_slice(&0i64.to_le_bytes());
        payload.extend_from_slice(&0u32.to_le_bytes());
    }
    payload.extend_from_slice(&1u32.to_le_bytes()); // one term
    s(&mut payload, "zebrafishv1only");
    payload.extend_from_slice(&1u32.to_le_bytes());
    payload.extend_from_slice(&1u32.to_le_bytes()); // doc_len
    payload.extend_from_slice(&[0; 16]); // no calls, references, documents, imports
    let mut out = b"CGPWSIX\x01".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    s(&mut out, root);
    out.extend_from_slice(&contextgraph_provider_workspace::index::sha256(&payload));
    out.extend_from_slice(&payload);
    out
}

#[test]
fn format_1_snapshot_is_detected_by_version_and_rebuilt_not_misread() {
    let f = Fixture::new();
    let (snap, journal) = index_files(&f);
    let root = std::fs::canonicalize(f.dir.path()).expect("canonical");
    std::fs::write(&snap, v1_snapshot(&root.to_string_lossy())).expect("write v1");
    let _ = std::fs::remove_file(&journal);
    let (p, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    match &source {
        IndexSource::Rebuilt { reason } => assert!(
            reason.contains("format 1") && reason.contains("index.bin"),
            "the diagnostic names the file and the old version: {reason}"
        ),
        other => panic!("a format-1 index must be rebuilt, got {other:?}"),
    }
    assert!(
        ask(&p, &q("zebrafishv1only")).frames.is_empty(),
        "nothing from the old file is served"
    );
    assert!(
        crate::common::find(&ask(&p, &q("retry_loop")), "src/net.rs#net::retry_loop").is_some()
    );
    drop(p);
    let (_, again) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("reopen");
    assert_eq!(
        again,
        IndexSource::Loaded,
        "the rebuilt index is in the current format"
    );
}

#[test]
fn snapshot_cut_at_any_length_is_rebuilt_with_a_diagnostic_never_a_panic() {
    let f = Fixture::new();
    let (snap, _) = index_files(&f);
    let full = std::fs::read(&snap).expect("read");
    for cut in [0, 4, 8, 11, 20, 60, full.len() / 3, full.len() - 1] {
        std::fs::write(&snap, &full[..cut]).expect("truncate");
        let (p, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
        match &source {
            IndexSource::Rebuilt { reason } => {
                assert!(reason.contains("rebuilt"), "cut {cut}: {reason}")
            }
            other => panic!("cut at {cut} bytes must be rebuilt, got {other:?}"),
        }
        assert!(
            crate::common::find(&ask(&p, &q("retry_loop")), "src/net.rs#net::retry_loop").is_some()
        );
        drop(p);
        // The rebuild rewrote a good snapshot; cut the original again next round.
    }
}

#[test]
fn snapshot_of_another_workspace_is_rebuilt() {
    let f = Fixture::new();
    let (snap, _) = index_files(&f);
    let bytes = std::fs::read(&snap).expect("read");
    // The workspace path follows magic (8) and version (4) as a length-prefixed string.
    let len = u32::from_le_bytes(bytes[12..16].try_into().expect("len")) as usize;
    let mut other = bytes.clone();
    other[16 + len - 1] ^= 0x01;
    std::fs::write(&snap, other).expect("write");
    let (_, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    match source {
        IndexSource::Rebuilt { reason } => {
            assert!(reason.contains("another workspace"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// N10: another process truncating the saved index in place while a
/// provider serves from it costs no crash (a small index is a copy, not a
/// mapping): the reader keeps answering from what it loaded.
#[test]
fn n10_an_index_truncated_under_a_reader_does_not_crash_it() {
    let f = Fixture::new();
    let (snap, _) = index_files(&f);
    let (p, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    assert_eq!(source, IndexSource::Loaded);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&snap)
        .and_then(|file| file.set_len(0))
        .expect("truncate in place");
    for _ in 0..3 {
        assert!(
            crate::common::find(&ask(&p, &q("retry_loop")), "src/net.rs#net::retry_loop").is_some()
        );
    }
}

/// N6: the index store's temporary files have unpredictable names and are
/// never written through a planted symlink; a cache directory another user
/// owns, or that others may write to, is refused with a clear error.
#[cfg(unix)]
#[test]
fn n6_the_cache_directory_must_be_the_users_own_and_temp_files_follow_no_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let (snap, _) = index_files(&f);
    let dir = snap.parent().unwrap().to_path_buf();
    // A planted symlink at the old predictable temporary name is never followed.
    let victim = f.cache.path().join("victim.txt");
    std::fs::write(&victim, "mine").unwrap();
    for ext in [
        format!("tmp{}", std::process::id()),
        format!("tmp{}", std::process::id() + 1),
    ] {
        let _ = std::os::unix::fs::symlink(&victim, snap.with_extension(ext));
    }
    f.write("src/new.rs", "pub fn fresh_marker() {}\n");
    let p = f.open();
    p.refresh().expect("refresh");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    drop(p);
    // Group- or world-writable: refused, with what to do.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = match WorkspaceProvider::open(f.dir.path(), f.options()) {
        Ok(_) => panic!("a writable-by-others cache dir is refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("may be written by other users"), "{err}");
    assert!(err.contains("CONTEXTGRAPH_WORKSPACE_CACHE"), "{err}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Owned by another user (needs root to arrange).
    let chowned = std::process::Command::new("chown")
        .arg("65534:65534")
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !chowned {
        eprintln!("skipped the ownership half: chown needs root");
        return;
    }
    let err = match WorkspaceProvider::open(f.dir.path(), f.options()) {
        Ok(_) => panic!("another user's cache dir is refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("belongs to another user (uid 65534)"), "{err}");
}
