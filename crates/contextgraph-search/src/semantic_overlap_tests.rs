//! Tests of the semantic pass run beside the ranking (`semantic_overlap.rs`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::index::ChunkRecord;
use crate::{CacheLocation, FileCache, Ranked, SearchOptions, Workspace, WorkspaceOptions};

/// A repository of 40 Rust files of two functions each (`step_{i}`, which
/// retries a request, and `glyph_{i}`, which draws a glyph), prose doc
/// comments on both: two topics a static model tells apart.
pub(crate) fn step_and_glyph_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("repo");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    for i in 0..40 {
        let text = format!(
            "/// Step {i}: retry the request after a delay.\npub fn step_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n/// Draw glyph {i} of the font.\npub fn glyph_{i}(y: u8) -> u8 {{\n    y\n}}\n"
        );
        std::fs::write(src.join(format!("f{i}.rs")), text).expect("write");
    }
    dir
}

/// A workspace with the semantic signal on: 40 files of two functions
/// each, prose doc comments on both; `files`: a question's scores blend in
/// whole files (`RerankSignals::semantic_files`).
fn workspace_with(files: bool) -> (tempfile::TempDir, Workspace) {
    let dir = step_and_glyph_repo();
    let mut options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        semantic: true,
        ..WorkspaceOptions::default()
    };
    options.rank_signals.semantic_files = files;
    let (ws, _) = Workspace::open(dir.path(), options).expect("open");
    assert!(ws.semantic_in_use());
    (dir, ws)
}

fn workspace() -> (tempfile::TempDir, Workspace) {
    workspace_with(false)
}

/// The ranking of the answer path before the overlap: the semantic matches
/// first ([`Workspace::semantic_top`]), then a view and its search.
fn ranked_in_turn(
    ws: &Workspace,
    goal: &str,
    limit: usize,
    accept: &dyn Fn(&ChunkRecord) -> bool,
) -> Vec<Ranked> {
    let semantic = ws.semantic_top(goal, limit, accept);
    let view = ws.view();
    let options = SearchOptions {
        accept,
        semantic: &semantic,
        ..SearchOptions::default()
    };
    view.search(goal, &options, &mut FileCache::default())
}

/// The overlapped answer ranks exactly as the pass-then-search one, with
/// any filter (one that admits few chunks widens the pass's window) and
/// any number of matches, none included; a plain view (no vectors held)
/// searches without the signal. With whole files blended into a
/// question's scores (every score needed first) as well.
#[test]
fn the_overlapped_ranking_is_the_one_in_turn() {
    for files in [false, true] {
        let (_dir, ws) = workspace_with(files);
        overlapped_ranks_as_in_turn(&ws);
    }
}

fn overlapped_ranks_as_in_turn(ws: &Workspace) {
    let all = |_: &ChunkRecord| true;
    let steps = |c: &ChunkRecord| {
        c.symbol
            .as_ref()
            .is_some_and(|s| s.name.starts_with("step_3"))
    };
    let filters: [&dyn Fn(&ChunkRecord) -> bool; 2] = [&all, &steps];
    let goals = [
        "retry the request later",
        "draw a glyph",
        "how is a font drawn",
        "step_7",
        "xyzzy",
    ];
    for accept in filters {
        for goal in goals {
            for limit in [0, 1, 3, 256] {
                let before = ranked_in_turn(ws, goal, limit, accept);
                let view = ws.view_with_semantic();
                let options = SearchOptions {
                    accept,
                    semantic: &[(0, 1.0)],
                    ..SearchOptions::default()
                };
                // The pass on a thread of its own, and on the answer's.
                for thread_rows in [0, usize::MAX] {
                    let mut files = FileCache::default();
                    let after =
                        view.search_overlapped(goal, limit, &options, &mut files, thread_rows);
                    assert_eq!(after, before, "{goal:?}, limit {limit}, {thread_rows}");
                }
            }
        }
    }
    let without = ranked_in_turn(ws, "retry the request later", 0, &all);
    let plain = ws.view().search_with_semantic(
        "retry the request later",
        256,
        &SearchOptions::default(),
        &mut FileCache::default(),
    );
    assert_eq!(plain, without);
}

/// An answer's ranking of a goal, as a server makes it; `held` is called
/// once it holds its view of the index (and returns when the test says).
type Answer = fn(&Workspace, &dyn Fn()) -> Vec<Ranked>;

/// Whether `answer` finishes while a refresh waits to write: a thread
/// takes the view, a writer queues behind it (seen when a new read is
/// refused: the lock favours writers), then the view answers. A lock order
/// in which the semantic pass takes a read lock of its own while the
/// ranking's is held cannot finish (the writer waits for the view, the
/// pass for the writer, the view for the pass): its threads are left
/// blocked when `patience` runs out.
fn answers_while_a_writer_waits(ws: &Workspace, patience: Duration, answer: Answer) -> bool {
    let (held_tx, held_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel();
    let answering = ws.clone();
    std::thread::spawn(move || {
        let held = || {
            let _ = held_tx.send(());
            let _ = go_rx.recv();
        };
        let _ = done_tx.send(answer(&answering, &held));
    });
    held_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the view is taken");
    let writing = ws.clone();
    let writer = std::thread::spawn(move || {
        drop(writing.shared.index.write());
    });
    let queued = Instant::now() + Duration::from_secs(60);
    while ws.shared.index.try_read().is_ok() {
        assert!(Instant::now() < queued, "the writer never queued");
        std::thread::sleep(Duration::from_millis(1));
    }
    go_tx.send(()).expect("the answering thread waits");
    let Ok(ranked) = done_rx.recv_timeout(patience) else {
        return false;
    };
    assert!(!ranked.is_empty());
    writer
        .join()
        .expect("the refresh applies once the view is gone");
    true
}

const GOAL: &str = "retry the request later";

/// The answer path: [`Workspace::view_with_semantic`], then
/// [`SearchView::search_with_semantic`](crate::SearchView::search_with_semantic).
fn overlapped(ws: &Workspace, held: &dyn Fn()) -> Vec<Ranked> {
    let view = ws.view_with_semantic();
    held();
    let options = SearchOptions::default();
    // The pass's own thread even on this small index.
    view.search_overlapped(GOAL, 32, &options, &mut FileCache::default(), 0)
}

/// The overlap as it was first thought of and not built: the view held,
/// [`Workspace::semantic_top`] (which takes its own read lock) on a second
/// thread beside the search.
fn overlapped_with_a_second_read(ws: &Workspace, held: &dyn Fn()) -> Vec<Ranked> {
    let view = ws.view();
    held();
    std::thread::scope(|scope| {
        let pass = scope.spawn(|| ws.semantic_top(GOAL, 256, &|_| true));
        let semantic = pass.join().unwrap_or_default();
        let options = SearchOptions {
            semantic: &semantic,
            ..SearchOptions::default()
        };
        view.search(GOAL, &options, &mut FileCache::default())
    })
}

/// An answer finishes while a refresh waits to write: its semantic pass
/// reads the answer's own view of the index. The same test catches the
/// other order (a second read lock on the pass's thread), which
/// deadlocks.
#[test]
fn an_answer_finishes_while_a_refresh_waits_to_write() {
    let (_dir, ws) = workspace();
    assert!(answers_while_a_writer_waits(
        &ws,
        Duration::from_secs(60),
        overlapped
    ));
    let (_dir, other) = workspace();
    assert!(
        !answers_while_a_writer_waits(&other, Duration::from_secs(2), overlapped_with_a_second_read),
        "a second read lock beside a held view must deadlock under a waiting writer (else this test proves nothing)"
    );
}

/// The ranking asks for the semantic matches only when it can use them:
/// not for a goal none of whose words the index holds, nor for one found
/// as a phrase in a file (the weight is zero there whatever the matches).
#[test]
fn the_matches_are_asked_for_only_when_the_ranking_uses_them() {
    let (_dir, ws) = workspace();
    let view = ws.view();
    for (goal, asked) in [
        ("retry the request later", true),
        ("qwzx vbnmq", false),
        ("retry the request after a delay", false),
    ] {
        let called = std::cell::Cell::new(false);
        let matches = || {
            called.set(true);
            std::borrow::Cow::Borrowed(&[][..])
        };
        let options = SearchOptions::default();
        view.search_awaiting(goal, &options, matches, &mut FileCache::default());
        assert_eq!(called.get(), asked, "{goal:?}");
    }
}

/// A pass left unread is stopped: once its stop is dropped, no part is
/// left to claim (while a fresh counter still has every part).
#[test]
fn a_stopped_pass_has_no_part_left_to_claim() {
    let (_dir, ws) = workspace();
    let view = ws.view_with_semantic();
    let ask = view
        .top_ask("retry the request later")
        .expect("vectors held");
    let super::Pass::Claimed(query) = super::Pass::of(&ask) else {
        panic!("the goal has a vector and no file share");
    };
    let claims = std::sync::atomic::AtomicUsize::new(0);
    drop(super::StopClaims(&claims));
    assert!(ask.claimed(&query, 64, &claims).is_empty());
    let fresh = std::sync::atomic::AtomicUsize::new(0);
    assert!(!ask.claimed(&query, 64, &fresh).is_empty());
}
