//! The chunk vectors persisted beside the index (`vectors.bin`): written
//! when a workspace opens with the semantic signal on, loaded by the next
//! process instead of re-embedding, rejected and rebuilt when corrupt or of
//! another model, and brought up to date when the index changed.

use std::collections::BTreeMap;
use std::path::Path;

use contextgraph_embed::{builtin, ModelSpec, StaticModel, Storage};
use contextgraph_search::semantic::SemanticIndex;
use contextgraph_search::vectors_file::{self, VectorsFileError};
use contextgraph_search::{Workspace, WorkspaceOptions};

use crate::common::{options, write_files};

const RETRY_RS: &str = "/// Send a request again after a failure, waiting longer each time.\npub fn send_with_backoff(max_attempts: u32) -> u32 {\n    max_attempts * 2\n}\n";
const RENDER_RS: &str = "/// Draw one glyph of a font into a bitmap.\npub fn render_glyph(font_size: f32) -> u8 {\n    font_size as u8\n}\n";

fn semantic_options(cache: &Path) -> WorkspaceOptions {
    WorkspaceOptions {
        semantic: true,
        ..options(cache)
    }
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("repo");
    write_files(
        dir.path(),
        &[("src/retry.rs", RETRY_RS), ("src/render.rs", RENDER_RS)],
    );
    dir
}

fn open(dir: &Path, cache: &Path) -> Workspace {
    Workspace::open(dir, semantic_options(cache))
        .expect("open")
        .0
}

#[test]
fn opening_with_the_semantic_signal_writes_the_vectors_and_a_second_open_loads_them() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let first = open(dir.path(), cache.path());
    let path = first.vectors_path().expect("persistence on");
    assert!(path.is_file(), "vectors computed at index time");
    let scores = first.semantic_scores("retry a failed request later");
    drop(first);

    let second = open(dir.path(), cache.path());
    // Already loaded at open: nothing left to do, nothing embedded.
    let report = second.prepare_semantic().expect("prepared");
    assert_eq!(report.update.embedded, 0, "{report:?}");
    // Loaded vectors score exactly as the ones computed (both int8).
    assert_eq!(
        second.semantic_scores("retry a failed request later"),
        scores
    );

    let loaded = vectors_file::read(&path, builtin().expect("model"))
        .expect("valid file")
        .expect("present");
    assert_eq!(loaded.len(), 2);
}

#[test]
fn without_the_semantic_signal_no_vectors_file_is_written() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let options = WorkspaceOptions {
        semantic: false,
        ..options(cache.path())
    };
    let (ws, _) = Workspace::open(dir.path(), options).expect("open");
    assert!(ws.vectors_path().is_some_and(|p| !p.exists()));
    assert!(ws.semantic_scores("retry").is_empty());
}

#[test]
fn a_corrupt_vectors_file_is_rejected_and_rebuilt() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let path = open(dir.path(), cache.path())
        .vectors_path()
        .expect("persistence on");
    let mut bytes = std::fs::read(&path).expect("written");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&path, &bytes).expect("corrupt it");
    let err = vectors_file::read(&path, builtin().expect("model")).expect_err("corrupt");
    assert!(matches!(err, VectorsFileError::Checksum { .. }), "{err}");

    // A fresh process: the file is rejected, the vectors rebuilt, the file
    // rewritten valid.
    let ws = open(dir.path(), cache.path());
    assert!(!ws.semantic_scores("draw a glyph").is_empty());
    let reread = vectors_file::read(&path, builtin().expect("model")).expect("rewritten");
    assert_eq!(reread.map(|v| v.len()), Some(2));

    // Truncated and foreign files are rejected too, never served.
    for bad in [&bytes[..10], &b"not a vectors file at all, just text"[..]] {
        std::fs::write(&path, bad).expect("write");
        assert!(vectors_file::read(&path, builtin().expect("model")).is_err());
    }
}

#[test]
fn a_file_that_is_only_a_valid_magic_is_rebuilt_at_open() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let path = open(dir.path(), cache.path())
        .vectors_path()
        .expect("persistence on");
    std::fs::write(&path, b"CGPVECS\ngarbage").expect("corrupt it");
    let ws = Workspace::open(dir.path(), semantic_options(cache.path()))
        .expect("open")
        .0;
    let reread = vectors_file::read(&path, builtin().expect("model"))
        .expect("rewritten at open")
        .expect("present");
    assert_eq!(reread.len(), 2);
    assert!(!ws.semantic_scores("draw a glyph").is_empty());
}

#[test]
fn vectors_of_another_model_are_rejected() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let path = open(dir.path(), cache.path())
        .vectors_path()
        .expect("persistence on");
    let tiny = ModelSpec {
        name: "tiny".into(),
        tokens: vec!["retry".into()],
        dim: 2,
        vectors: vec![1.0, 0.0],
        weights: None,
        metadata: BTreeMap::new(),
    };
    let tiny = StaticModel::from_bytes(
        &tiny.to_safetensors(Storage::Float32).expect("valid"),
        "tiny",
    )
    .expect("loads");
    let err = vectors_file::read(&path, &tiny).expect_err("other model");
    assert!(matches!(err, VectorsFileError::OtherModel { .. }), "{err}");
}

#[test]
fn a_stale_vectors_file_is_brought_up_to_date_with_the_index() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let path = open(dir.path(), cache.path())
        .vectors_path()
        .expect("persistence on");
    let before = std::fs::read(&path).expect("written");
    // The code changes while no process runs: the stored vectors describe
    // content the index no longer holds.
    write_files(
        dir.path(),
        &[("src/render.rs", &RENDER_RS.replace("glyph", "sprite"))],
    );
    let ws = open(dir.path(), cache.path());
    ws.refresh().expect("refresh");
    let report = ws.prepare_semantic().expect("prepared");
    assert_eq!(
        report.update.embedded, 1,
        "only the edited chunk: {report:?}"
    );
    assert_eq!(
        report.update.dropped, 1,
        "its old vector dropped: {report:?}"
    );
    assert!(report.written);
    let after = std::fs::read(&path).expect("rewritten");
    assert_ne!(before, after);
    let loaded = vectors_file::read(&path, builtin().expect("model"))
        .expect("valid")
        .expect("present");
    assert_eq!(loaded.len(), 2);
    // The file holds exactly the vectors of the current index.
    let mut fresh = SemanticIndex::new(builtin().expect("model"));
    fresh
        .update(&ws, builtin().expect("model"))
        .expect("same model");
    let mut a: Vec<_> = loaded.rows().map(|(d, v)| (*d, v.to_vec())).collect();
    let mut b: Vec<_> = fresh.rows().map(|(d, v)| (*d, v.to_vec())).collect();
    a.sort_by_key(|x| x.0);
    b.sort_by_key(|x| x.0);
    assert_eq!(a, b);
}

/// Above `semantic_max_chunks` the signal is not used: no vectors are
/// computed or written, and a goal gets no semantic scores (its per-process
/// cost grows with the index); at the limit it runs.
#[test]
fn an_index_over_the_chunk_limit_runs_without_the_semantic_signal() {
    let dir = repo();
    let probe = tempfile::tempdir().expect("cache");
    let chunks = open(dir.path(), probe.path()).view().index().chunk_count();
    assert!(chunks >= 2, "{chunks}");

    let cache = tempfile::tempdir().expect("cache");
    let over = WorkspaceOptions {
        semantic_max_chunks: chunks - 1,
        ..semantic_options(cache.path())
    };
    let ws = Workspace::open(dir.path(), over).expect("open").0;
    assert!(!ws.semantic_in_use());
    let path = ws.vectors_path().expect("persistence on");
    assert!(!path.exists(), "no vectors written over the limit");
    assert!(ws
        .semantic_scores("retry a failed request later")
        .is_empty());
    drop(ws);

    let at = WorkspaceOptions {
        semantic_max_chunks: chunks,
        ..semantic_options(cache.path())
    };
    let ws = Workspace::open(dir.path(), at).expect("open").0;
    assert!(ws.semantic_in_use());
    assert!(!ws
        .semantic_scores("retry a failed request later")
        .is_empty());
    assert!(path.is_file());
}
