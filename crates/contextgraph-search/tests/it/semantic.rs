//! The semantic signal over a workspace: chunk vectors from the built-in
//! model, a prose goal scoring the implementing chunk first, incremental
//! updates by content digest, stale files skipped, and a mismatched model
//! refused.

use std::collections::BTreeMap;

use contextgraph_embed::{builtin, ModelError, ModelSpec, StaticModel, Storage};
use contextgraph_search::semantic::SemanticIndex;
use contextgraph_search::Workspace;

use crate::common::{options, write_files};

const RETRY_RS: &str = "/// Send a request again after a failure, waiting longer each time.\npub fn send_with_backoff(max_attempts: u32) -> u32 {\n    let mut delay_ms = 100;\n    for attempt in 0..max_attempts {\n        delay_ms *= 2;\n        let _ = attempt;\n    }\n    delay_ms\n}\n";
const RENDER_RS: &str = "/// Draw one glyph of a font into a bitmap.\npub fn render_glyph(font_size: f32, pixels: &mut [u8]) {\n    for pixel in pixels.iter_mut() {\n        *pixel = (font_size as u8).saturating_mul(2);\n    }\n}\n";

fn workspace() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("repo");
    write_files(
        dir.path(),
        &[("src/retry.rs", RETRY_RS), ("src/render.rs", RENDER_RS)],
    );
    let cache = tempfile::tempdir().expect("cache");
    let (ws, _) = Workspace::open(dir.path(), options(cache.path())).expect("open");
    (dir, cache, ws)
}

fn model() -> &'static StaticModel {
    builtin().expect("built-in model")
}

/// The file of the best-scoring chunk for `goal`.
fn best_file(ws: &Workspace, semantic: &SemanticIndex, goal: &str) -> Option<String> {
    let view = ws.view();
    let scores = semantic
        .semantic_scores(&view, model(), goal)
        .expect("same model");
    scores
        .first()
        .and_then(|&(slot, _)| view.chunk(slot))
        .map(|(path, _)| path.to_string())
}

#[test]
fn a_prose_goal_scores_the_implementing_chunk_first() {
    let (_dir, _cache, ws) = workspace();
    let mut semantic = SemanticIndex::new(model());
    let report = semantic.update(&ws, model()).expect("same model");
    assert!(report.embedded >= 2, "{report:?}");
    assert_eq!(report.skipped, 0, "{report:?}");
    assert_eq!(
        best_file(
            &ws,
            &semantic,
            "how many times do we retry a failed request"
        )
        .as_deref(),
        Some("src/retry.rs")
    );
    assert_eq!(
        best_file(&ws, &semantic, "draw text with a typeface").as_deref(),
        Some("src/render.rs")
    );
    let view = ws.view();
    assert!(semantic
        .semantic_scores(&view, model(), "zzzqqq")
        .expect("same model")
        .is_empty());
}

#[test]
fn updates_embed_only_new_content_and_skip_files_changed_since_indexing() {
    let (dir, _cache, ws) = workspace();
    // Edited on disk but not yet re-indexed: the recorded digest no longer
    // matches the bytes, so the stale file's chunks get no vector.
    write_files(
        dir.path(),
        &[("src/render.rs", &RENDER_RS.replace("glyph", "sprite"))],
    );
    let mut semantic = SemanticIndex::new(model());
    let stale = semantic.update(&ws, model()).expect("same model");
    assert!(stale.skipped > 0 && stale.embedded > 0, "{stale:?}");

    // Refreshed but not yet updated: the edited file's new chunks have no
    // vector, and no stale vector is served for them.
    ws.refresh().expect("refresh");
    {
        let view = ws.view();
        let scores = semantic
            .semantic_scores(&view, model(), "draw a sprite")
            .expect("same model");
        assert!(!scores.is_empty());
        for (slot, _) in scores {
            let (path, _) = view.chunk(slot).expect("live slot");
            assert_eq!(path, "src/retry.rs", "only the unchanged file has vectors");
        }
    }

    // After the update the edited file's chunks are embedded and the
    // untouched file's vectors are reused.
    let fresh = semantic.update(&ws, model()).expect("same model");
    assert!(
        fresh.embedded > 0 && fresh.reused > 0 && fresh.skipped == 0,
        "{fresh:?}"
    );

    // Nothing changed: nothing to embed.
    let again = semantic.update(&ws, model()).expect("same model");
    assert_eq!(
        (again.embedded, again.reused),
        (0, fresh.embedded + fresh.reused)
    );
    assert_eq!(semantic.len(), fresh.embedded + fresh.reused);
}

#[test]
fn a_model_other_than_the_one_the_vectors_came_from_is_refused() {
    let (_dir, _cache, ws) = workspace();
    let mut semantic = SemanticIndex::new(model());
    semantic.update(&ws, model()).expect("same model");
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
    let view = ws.view();
    let err = semantic
        .semantic_scores(&view, &tiny, "retry")
        .expect_err("other model");
    assert!(matches!(err, ModelError::DimMismatch { .. }), "{err}");
    drop(view);
    let err = semantic.update(&ws, &tiny).expect_err("other model");
    assert!(matches!(err, ModelError::DimMismatch { .. }), "{err}");
}

/// The slots of `goal`'s hits with `semantic` scores fused in, best first.
fn ranked_with(ws: &Workspace, goal: &str, semantic: &[(u32, f32)]) -> Vec<u32> {
    let view = ws.view();
    let mut files = contextgraph_search::FileCache::default();
    let accept = |_: &contextgraph_search::index::ChunkRecord| true;
    view.search(
        goal,
        &contextgraph_search::SearchOptions {
            anchors: &[],
            accept: &accept,
            semantic,
        },
        &mut files,
    )
    .iter()
    .map(|hit| hit.slot)
    .collect()
}

/// A goal found verbatim in the code is pasted text: the semantic signal
/// stays out of it (a match of the model alone does not even join the
/// answer), while a goal in other words still gets the model's match.
#[test]
fn a_pasted_phrase_is_ranked_without_the_semantic_signal() {
    let (_dir, _cache, ws) = workspace();
    let render = ranked_with(&ws, "render_glyph", &[])
        .into_iter()
        .find(|&slot| {
            ws.view()
                .chunk(slot)
                .is_some_and(|(path, c)| path == "src/render.rs" && c.symbol.is_some())
        })
        .expect("the render_glyph chunk");
    let retry = ranked_with(&ws, "send_with_backoff", &[])
        .into_iter()
        .find(|&slot| {
            ws.view()
                .chunk(slot)
                .is_some_and(|(path, _)| path == "src/retry.rs")
        })
        .expect("a chunk of src/retry.rs");
    // As if the model placed the glyph renderer nearest to every goal
    // (cosines are rescaled between the last kept match and the best).
    let semantic = [(render, 0.9), (retry, 0.1)];
    let pasted = ranked_with(&ws, "waiting longer each time", &semantic);
    assert!(!pasted.is_empty());
    assert!(
        !pasted.contains(&render),
        "a pasted phrase got a match of the model alone: {pasted:?}"
    );
    let prose = ranked_with(&ws, "waiting a bit longer each attempt", &semantic);
    assert!(
        prose.contains(&render),
        "a goal in other words gets the model's match: {prose:?}"
    );
}

/// A goal none of whose words the workspace holds names nothing in it: the
/// model's nearest chunks are not served as an answer.
#[test]
fn a_goal_the_workspace_has_no_word_of_gets_no_semantic_matches() {
    let (_dir, _cache, ws) = workspace();
    let any: Vec<(u32, f32)> = ranked_with(&ws, "send_with_backoff render_glyph", &[])
        .into_iter()
        .zip([0.9, 0.1])
        .collect();
    assert_eq!(any.len(), 2, "{any:?}");
    assert!(
        ranked_with(&ws, "xyzzy plugh", &any).is_empty(),
        "matches of the model alone were served"
    );
    assert!(!ranked_with(&ws, "waiting longer before the next attempt", &any).is_empty());
}

/// A question asks about a file or a part of the design: its semantic
/// scores blend in each chunk's whole file (`QUESTION_FILE_SHARE`). Here
/// one chunk of an otherwise unrelated file (rendering) holds the goal's
/// words best, while a file about retrying throughout holds them in other
/// words: with the blend the retry file's chunk scores first, without it
/// (`RerankSignals::semantic_files` off) the lone chunk does; a goal that
/// is not a question is scored chunk by chunk either way.
#[test]
fn a_question_scores_a_file_about_the_goal_throughout_above_a_lone_matching_chunk() {
    let dir = tempfile::tempdir().expect("repo");
    let retry = "/// Reconnect to the server after a timeout, with exponential backoff.\npub fn reconnect_with_backoff(max_attempts: u32) -> u32 {\n    max_attempts * 2\n}\n\n/// The delay before the next attempt grows after every failure.\npub fn next_backoff_delay(attempt: u32) -> u64 {\n    100u64 << attempt.min(10)\n}\n\n/// Give up once the attempts are exhausted and report the last failure.\npub fn give_up_after(attempts: u32, limit: u32) -> bool {\n    attempts >= limit\n}\n";
    let render = "/// Draw one glyph of a font into a bitmap.\npub fn render_glyph(font_size: f32) -> u8 {\n    font_size as u8\n}\n\n/// Blend two pixel colours with the palette.\npub fn blend_pixel(a: u8, palette: u8) -> u8 {\n    a / 2 + palette / 2\n}\n\n/// How the client retries a failed request.\npub fn client_request_retries() -> u32 {\n    3\n}\n\n/// Fill a rectangle of the canvas with a shade.\npub fn fill_rectangle(width: u32, height: u32, shade: u8) -> u8 {\n    shade.wrapping_add((width * height) as u8)\n}\n";
    write_files(
        dir.path(),
        &[("src/retry.rs", retry), ("src/render.rs", render)],
    );
    let best = |signals: contextgraph_search::rerank::RerankSignals, goal: &str| {
        let cache = tempfile::tempdir().expect("cache");
        let mut opts = options(cache.path());
        opts.semantic = true;
        opts.rank_signals = signals;
        let (ws, _) = Workspace::open(dir.path(), opts).expect("open");
        let scores = ws.semantic_scores(goal);
        let view = ws.view();
        scores
            .first()
            .and_then(|&(slot, _)| view.chunk(slot))
            .map(|(path, _)| path.to_string())
    };
    // Off by default (see `RerankSignals::semantic_files`): on here.
    let on = contextgraph_search::rerank::RerankSignals {
        semantic_files: true,
        ..Default::default()
    };
    let off = contextgraph_search::rerank::RerankSignals::default();
    let question = "how does the client retry a failed request?";
    assert_eq!(best(on, question).as_deref(), Some("src/retry.rs"));
    assert_eq!(best(off, question).as_deref(), Some("src/render.rs"));
    let description = "the client retries a failed request";
    assert_eq!(best(on, description).as_deref(), Some("src/render.rs"));
}

/// The measuring switch `model_alone` ranks by the model's scores with the
/// lexical score's weight zeroed: a goal that names one file's function
/// lexically is ranked by the semantic scores given, which here favour the
/// other file; by default the lexical match wins.
#[test]
fn model_alone_ranks_by_the_semantic_score_instead_of_the_lexical_one() {
    let dir = tempfile::tempdir().expect("repo");
    write_files(
        dir.path(),
        &[("src/retry.rs", RETRY_RS), ("src/render.rs", RENDER_RS)],
    );
    let first_file = |signals: contextgraph_search::rerank::RerankSignals| {
        let cache = tempfile::tempdir().expect("cache");
        let mut opts = options(cache.path());
        opts.rank_signals = signals;
        let (ws, _) = Workspace::open(dir.path(), opts).expect("open");
        let slot_of = |name: &str, path: &str| {
            ranked_with(&ws, name, &[])
                .into_iter()
                .find(|&s| ws.view().chunk(s).is_some_and(|(p, _)| p == path))
                .expect("a chunk of the file")
        };
        let semantic = [
            (slot_of("render_glyph", "src/render.rs"), 0.9),
            (slot_of("send_with_backoff", "src/retry.rs"), 0.1),
        ];
        let ranked = ranked_with(&ws, "send a request again with backoff", &semantic);
        ranked
            .first()
            .and_then(|&s| ws.view().chunk(s).map(|(p, _)| p.to_string()))
    };
    let alone = contextgraph_search::rerank::RerankSignals {
        model_alone: true,
        ..Default::default()
    };
    assert_eq!(
        first_file(Default::default()).as_deref(),
        Some("src/retry.rs")
    );
    assert_eq!(first_file(alone).as_deref(), Some("src/render.rs"));
}
