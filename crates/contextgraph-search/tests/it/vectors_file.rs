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
    drop(ws);

    // The next process loads the snapshot and the journal: the aligned
    // vectors file is still the one written for that snapshot, and the
    // edited chunk's vector comes from the tail file, not the model.
    assert_eq!(std::fs::read(&path).expect("kept"), before);
    let ws = open(dir.path(), cache.path());
    assert!(ws.semantic_is_mapped(), "read in place");
    assert_eq!(ws.prepare_semantic().expect("prepared").update.embedded, 0);
    assert_same_vectors_as_a_fresh_build(&ws);
}

/// Every live slot's vector in `ws` equals the one a fresh embedding of
/// the same index gives (both are rounded to int8 the same way), and the
/// goal scores are equal.
fn assert_same_vectors_as_a_fresh_build(ws: &Workspace) {
    let model = builtin().expect("model");
    let mut fresh = SemanticIndex::new(model);
    fresh.update(ws, model).expect("same model");
    let goal = "retry a failed request later";
    let view = ws.view();
    let index = view.index();
    let mut compared = 0;
    for slot in 0..index.slot_capacity() as u32 {
        if index.is_live(slot) {
            let expected = fresh.vector(index, slot);
            assert!(expected.is_some(), "slot {slot} has a vector");
            assert_eq!(ws_vector(ws, slot), expected, "slot {slot}");
            compared += 1;
        }
    }
    assert!(compared >= 2);
    let fresh_scores = fresh.semantic_scores(&view, model, goal).expect("model");
    drop(view);
    assert_eq!(ws.semantic_scores(goal), fresh_scores);
}

/// A slot's vector as the workspace serves it: its score for a goal equals
/// the cosine of the goal with the vector, so compare the vectors through
/// a SemanticIndex brought up to date the way the workspace's was (loaded
/// from its files).
fn ws_vector(ws: &Workspace, slot: u32) -> Option<Vec<f32>> {
    let model = builtin().expect("model");
    let dir = ws.vectors_path().expect("persistence on");
    let aligned = vectors_file::read_aligned(&dir, model).expect("valid");
    let tail = vectors_file::read_tail(&dir.with_file_name(vectors_file::TAIL_FILE), model)
        .expect("valid");
    let view = ws.view();
    let mut loaded = SemanticIndex::from_saved(model, view.index(), aligned, tail);
    drop(view);
    loaded.update(ws, model).expect("same model");
    let view = ws.view();
    loaded.vector(view.index(), slot)
}

const TWO_FNS: &str = "/// Send a request again after a failure, waiting longer each time.\npub fn send_with_backoff(max_attempts: u32) -> u32 {\n    max_attempts * 2\n}\n\n/// Draw one glyph of a font into a bitmap.\npub fn render_glyph(font_size: f32) -> u8 {\n    font_size as u8\n}\n";

/// The vector of a live chunk whose title names `name`.
fn vector_of(ws: &Workspace, semantic: &SemanticIndex, name: &str) -> Vec<f32> {
    let view = ws.view();
    let index = view.index();
    let slot = (0..index.slot_capacity() as u32)
        .find(|&s| index.chunk(s).is_some_and(|(_, c)| c.title.contains(name)))
        .expect("chunk present");
    semantic.vector(index, slot).expect("has a vector")
}

#[test]
fn after_a_refresh_an_edited_chunk_gets_a_new_vector_and_an_unchanged_one_keeps_its_own() {
    let dir = tempfile::tempdir().expect("repo");
    write_files(dir.path(), &[("src/lib.rs", TWO_FNS)]);
    let cache = tempfile::tempdir().expect("cache");
    let ws = open(dir.path(), cache.path());
    let model = builtin().expect("model");
    let mut semantic = SemanticIndex::new(model);
    semantic.update(&ws, model).expect("same model");
    let kept_before = vector_of(&ws, &semantic, "send_with_backoff");
    let edited_before = vector_of(&ws, &semantic, "render_glyph");

    // Only the second function changes; the file is re-indexed whole (its
    // slots tombstoned, new ones appended).
    write_files(
        dir.path(),
        &[(
            "src/lib.rs",
            &TWO_FNS.replace("glyph of a font into a bitmap", "sprite on the screen"),
        )],
    );
    ws.refresh().expect("refresh");
    let report = semantic.update(&ws, model).expect("same model");
    assert_eq!(report.embedded, 1, "only the edited chunk: {report:?}");
    assert!(
        report.reused_rows >= 1,
        "the unchanged chunk's vector found by content: {report:?}"
    );
    assert_eq!(vector_of(&ws, &semantic, "send_with_backoff"), kept_before);
    assert_ne!(vector_of(&ws, &semantic, "render_glyph"), edited_before);
    // And every slot holds what a fresh embedding of the index gives.
    let mut fresh = SemanticIndex::new(model);
    fresh.update(&ws, model).expect("same model");
    let view = ws.view();
    for slot in 0..view.index().slot_capacity() as u32 {
        assert_eq!(
            semantic.vector(view.index(), slot),
            fresh.vector(view.index(), slot),
            "slot {slot}"
        );
    }
}

#[test]
fn a_snapshot_written_after_edits_gets_vectors_in_its_own_slot_order() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let ws = open(dir.path(), cache.path());
    // An edit large enough that the refresh writes a new snapshot instead
    // of appending to the journal: the index then has dead slots, so the
    // snapshot's slots are numbered differently from this process's.
    let big: String = (0..400)
        .map(|i| format!("/// Step {i} of the long pipeline.\npub fn step_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"))
        .collect();
    // (A journal that grew large by the first refresh is folded into a
    // snapshot by the next.)
    let before = std::fs::read(ws.vectors_path().expect("on")).expect("written");
    write_files(dir.path(), &[("src/pipeline.rs", &big)]);
    ws.refresh().expect("refresh");
    write_files(
        dir.path(),
        &[("src/render.rs", &RENDER_RS.replace("glyph", "sprite"))],
    );
    ws.refresh().expect("refresh");
    assert!(ws.prepare_semantic().expect("prepared").written);
    assert_ne!(
        std::fs::read(ws.vectors_path().expect("on")).expect("written"),
        before,
        "aligned with the new snapshot"
    );
    drop(ws);

    let ws = open(dir.path(), cache.path());
    assert!(
        ws.semantic_is_mapped(),
        "the new snapshot's vectors read in place"
    );
    assert_eq!(ws.prepare_semantic().expect("prepared").update.embedded, 0);
    assert_same_vectors_as_a_fresh_build(&ws);
}

#[test]
fn vectors_of_another_snapshot_are_carried_over_by_content() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let path = open(dir.path(), cache.path())
        .vectors_path()
        .expect("persistence on");
    // The index is rebuilt from edited files (its snapshot is another);
    // the vectors file still names the old one.
    write_files(
        dir.path(),
        &[("src/render.rs", &RENDER_RS.replace("glyph", "sprite"))],
    );
    for f in ["index.bin", "journal.bin", "tree.bin"] {
        let _ = std::fs::remove_file(path.with_file_name(f));
    }
    let ws = open(dir.path(), cache.path());
    let report = ws.prepare_semantic().expect("prepared");
    assert_eq!(report, Default::default(), "prepared at open");
    drop(ws);
    let ws = open(dir.path(), cache.path());
    assert!(ws.semantic_is_mapped(), "rewritten for the new snapshot");
    assert_same_vectors_as_a_fresh_build(&ws);
}

#[test]
fn a_version_1_vectors_file_is_rejected_and_rebuilt() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let path = open(dir.path(), cache.path())
        .vectors_path()
        .expect("persistence on");
    let mut old = b"CGPVECS\n".to_vec();
    old.extend_from_slice(&1u32.to_le_bytes());
    old.extend_from_slice(&[0u8; 64]);
    std::fs::write(&path, &old).expect("write");
    let err = vectors_file::read(&path, builtin().expect("model")).expect_err("old format");
    assert!(matches!(err, VectorsFileError::Format { .. }), "{err}");
    let ws = open(dir.path(), cache.path());
    assert!(!ws.semantic_scores("draw a glyph").is_empty());
    assert_eq!(
        vectors_file::read(&path, builtin().expect("model"))
            .expect("rewritten")
            .map(|v| v.len()),
        Some(2)
    );
    for cut in [20, std::fs::read(&path).expect("read").len() - 3] {
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&path, &bytes[..cut]).expect("truncate");
        assert!(
            vectors_file::read(&path, builtin().expect("model")).is_err(),
            "cut at {cut}"
        );
        let ws = open(dir.path(), cache.path());
        assert!(!ws.semantic_scores("draw a glyph").is_empty());
        assert!(vectors_file::read(&path, builtin().expect("model")).is_ok_and(|v| v.is_some()));
        std::fs::write(&path, &bytes).expect("restore");
    }
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

#[test]
fn a_corrupt_tail_file_is_rejected_and_rebuilt() {
    let dir = repo();
    let cache = tempfile::tempdir().expect("cache");
    let ws = open(dir.path(), cache.path());
    let tail = ws
        .vectors_path()
        .expect("persistence on")
        .with_file_name(vectors_file::TAIL_FILE);
    // An edit after the snapshot: its vector goes to the tail file.
    write_files(
        dir.path(),
        &[("src/render.rs", &RENDER_RS.replace("glyph", "sprite"))],
    );
    ws.refresh().expect("refresh");
    assert!(ws.prepare_semantic().expect("prepared").written);
    drop(ws);
    let mut bytes = std::fs::read(&tail).expect("written");
    let at = bytes.len() - 10;
    bytes[at] ^= 0x01;
    std::fs::write(&tail, &bytes).expect("corrupt it");
    let err = vectors_file::read_tail(&tail, builtin().expect("model")).expect_err("corrupt");
    assert!(matches!(err, VectorsFileError::Checksum { .. }), "{err}");

    // The next process embeds the journal's chunk again and rewrites it.
    let ws = open(dir.path(), cache.path());
    assert!(ws.semantic_is_mapped(), "the aligned file is still good");
    assert!(vectors_file::read_tail(&tail, builtin().expect("model"))
        .expect("rewritten")
        .is_some_and(|t| t.len() == 1));
    assert_same_vectors_as_a_fresh_build(&ws);
}

#[test]
fn a_query_is_served_exactly_the_head_of_the_accepted_scores() {
    let dir = repo();
    write_files(
        dir.path(),
        &[(
            "src/net.rs",
            "/// Reconnect after a dropped connection, waiting between attempts.\npub fn reconnect(attempts: u32) -> u32 {\n    attempts + 1\n}\n",
        )],
    );
    let cache = tempfile::tempdir().expect("cache");
    let ws = open(dir.path(), cache.path());
    let goal = "retry a failed request later";
    let all = ws.semantic_scores(goal);
    assert!(all.len() >= 3, "{all:?}");
    let view = ws.view();
    let path_of = |slot: u32| view.chunk(slot).map(|(p, _)| p.to_string());
    // The best match's file filtered out: the window must widen past it.
    let rejected = path_of(all[0].0).expect("live");
    // A chunk record carries no path: the rejected file's chunks are told
    // by their digests.
    let rejected_digests: Vec<[u8; 32]> = view
        .index()
        .file(&rejected)
        .map(|f| f.chunks.iter().map(|c| c.digest).collect())
        .unwrap_or_default();
    for limit in [1, 2, 5] {
        let expected: Vec<(u32, f32)> = all
            .iter()
            .filter(|&&(s, _)| path_of(s).as_deref() != Some(rejected.as_str()))
            .take(limit)
            .copied()
            .collect();
        // (Unlike the test's, the workspace's view is taken by the call.)
        let served = ws.semantic_top(goal, limit, &|c| !rejected_digests.contains(&c.digest));
        assert_eq!(served, expected, "limit {limit}");
    }
}
