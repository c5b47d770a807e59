//! Fuzz target bodies (not API: hidden from the docs, may change any time).
//!
//! [`anchor`] and [`snapshot`] are the whole bodies of the `anchor` and
//! `snapshot` targets: the libFuzzer programs in the repository's `fuzz/`
//! workspace call them with the fuzzer's bytes, and a stable test replays
//! every committed seed and regression input through them
//! (`tests/it/fuzz_replay.rs`). A body panics exactly when a property
//! breaks.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::index::{Backing, Index, DIRECTORY_BYTES};
use crate::store::{Store, JOURNAL_MAGIC, SNAPSHOT_MAGIC};
use crate::uri::{file_uri, parse_anchor, symbol_uri};

/// `anchor`: the input (UTF-8; anchors arrive as strings) as an anchor of
/// the workspace `/repo`, and, split at its first `\n`, as a file path and
/// a chunk id. Parsing any anchor answers, without panicking; the symbol
/// URI of a chunk id in a plain relative path parses back to that path
/// and that id, whatever bytes the id holds.
pub fn anchor(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let root = Path::new("/repo");
    if let Some(target) = parse_anchor(root, text) {
        assert!(!target.rel_path.is_empty(), "an anchor names a file");
    }
    let Some((rel, id)) = text.split_once('\n') else {
        return;
    };
    let uri = symbol_uri(&file_uri(root, rel), id);
    let target = parse_anchor(root, &uri);
    let plain = rel
        .split('/')
        .all(|c| !c.is_empty() && c != "." && c != "..")
        && rel
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'));
    if plain {
        let target = target.unwrap_or_else(|| panic!("symbol URI {uri:?} names a file"));
        assert_eq!(target.rel_path, rel, "the path of {uri:?}");
        assert_eq!(
            target.local_id.as_deref(),
            Some(id),
            "the chunk id of {uri:?}"
        );
    }
}

/// The workspace root the `snapshot` target's store belongs to (seeds carry
/// it in their headers).
pub const SNAPSHOT_ROOT: &str = "/fuzz-root";

/// A scratch cache directory of this process, for the store's files.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cgp-fuzz-snapshot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory for the snapshot target");
        dir
    })
}

/// Where `bytes` puts the journal: at the first journal magic, if any.
fn split_journal(bytes: &[u8]) -> (&[u8], Option<&[u8]>) {
    match bytes
        .windows(JOURNAL_MAGIC.len())
        .position(|w| w == JOURNAL_MAGIC)
    {
        Some(at) => (&bytes[..at], Some(&bytes[at..])),
        None => (bytes, None),
    }
}

/// `snapshot`: the input as a saved index, two ways.
///
/// - As the cache directory's files (`index.bin`, then from the first
///   journal magic on, `journal.bin`) loaded by [`Store::load_index`]: a
///   typed error or an index, never a panic, and no allocation beyond what
///   the bytes hold.
/// - As the snapshot payload with every section checksum and the
///   directory's recomputed, so that the fuzzer reaches past the CRC-32
///   gates into the decoders of the sections (what a checksum collision
///   would reach).
///
/// A loaded index is then read everywhere a query reads (files, chunks,
/// terms, postings, edges; bounded by the bytes present), and what it
/// encodes to opens again (what we write, we read).
pub fn snapshot(data: &[u8]) {
    let store = Store::new(scratch().to_path_buf(), Path::new(SNAPSHOT_ROOT));
    let (snap, journal) = split_journal(data);
    std::fs::write(scratch().join("index.bin"), snap).expect("write index.bin");
    match journal {
        Some(j) => std::fs::write(scratch().join("journal.bin"), j).expect("write journal.bin"),
        None => match std::fs::remove_file(scratch().join("journal.bin")) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("remove journal.bin: {e}"),
        },
    }
    match store.load_index() {
        Ok(Some((index, _))) => exercise(index),
        Ok(None) => panic!("index.bin was written, so there is an index"),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let mut payload = snap
        .strip_prefix(&SNAPSHOT_MAGIC[..])
        .and_then(|rest| {
            let mut r = crate::codec::Reader::new(rest);
            r.u32()?;
            r.str()?;
            Some(r.rest())
        })
        .unwrap_or(snap)
        .to_vec();
    if reseal(&mut payload) {
        if let Some(index) = Index::open(Arc::new(Backing::Owned(payload)), 0) {
            exercise(index);
        }
    }
}

/// Recompute the section checksums the directory of `payload` declares
/// (sections out of range are left as they are) and the directory's own;
/// `false` when the payload cannot hold a directory.
fn reseal(payload: &mut [u8]) -> bool {
    if payload.len() < DIRECTORY_BYTES {
        return false;
    }
    let sections = (DIRECTORY_BYTES - 4) / 20;
    let u64_at = |p: &[u8], at: usize| {
        u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes")) as usize
    };
    for i in 0..sections {
        let (off, len) = (u64_at(payload, i * 20), u64_at(payload, i * 20 + 8));
        if let Some(section) = off.checked_add(len).and_then(|end| payload.get(off..end)) {
            let crc = crc32fast::hash(section);
            payload[i * 20 + 16..i * 20 + 20].copy_from_slice(&crc.to_le_bytes());
        }
    }
    let crc = crc32fast::hash(&payload[..sections * 20]);
    payload[sections * 20..DIRECTORY_BYTES].copy_from_slice(&crc.to_le_bytes());
    true
}

/// Read a loaded index the ways queries and refreshes do, then check that
/// it encodes to a payload that opens again.
fn exercise(index: Index) {
    let _ = (index.file_count(), index.chunk_count(), index.term_count());
    let _ = (index.avg_len(), index.is_intact(), index.saved_snapshot());
    let paths: Vec<String> = index.heads().take(64).map(|h| h.rel_path.clone()).collect();
    for path in &paths {
        let _ = index.file(path);
        let _ = index.record_with_terms(path);
        for slot in index.file_slots(path).take(64) {
            let _ = (index.is_live(slot), index.file_number(slot));
        }
        let _ = index.importers_of(path).take(64).count();
    }
    let slots: Vec<u32> = index.live_slot_numbers().take(256).collect();
    for &slot in &slots {
        let _ = (index.slot_path(slot), index.file_number(slot));
        if let Some((path, chunk)) = index.chunk(slot) {
            let _ = index.find(path, &chunk.local_id);
            for name in chunk.calls.iter().take(4) {
                let _ = index.definitions(name).take(64).count();
                let _ = index.mentions_of(name).take(64).count();
            }
        }
        for (term, _) in index.chunk_terms(slot).into_iter().take(8) {
            let _ = index.df(&term);
            let _ = index.postings(&term).take(256).count();
        }
    }
    for term in ["fn", "main", "retry"] {
        let _ = index.df(term);
        let _ = index.postings(term).take(256).count();
    }
    let _ = index.records_with_terms();
    let encoded = index.encode_to_vec();
    // Only an intact index is ever written again: one whose saved chunks
    // failed their checks on first use is rebuilt from the files by the
    // next refresh, and `Store::write_index` refuses it (found by this
    // target: `regressions/snapshot/reencode-does-not-open`).
    if index.is_intact() {
        assert!(
            Index::open(Arc::new(Backing::Owned(encoded)), 0).is_some(),
            "a loaded index re-encodes to a payload that opens"
        );
    }
}
