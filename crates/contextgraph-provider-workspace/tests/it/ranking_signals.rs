//! The ranking layer (`contextgraph_search::rerank`), one test per step:
//! each test asks the same goal with every step on and with that one step
//! off, and shows that the step is what puts the right file first.

use crate::common::{ask, ids, q, Fixture};
use contextgraph_provider_workspace::WorkspaceProvider;
use contextgraph_search::rerank::RerankSignals;

/// Open the fixture with some steps of the layer switched off.
fn open_with(f: &Fixture, signals: RerankSignals) -> WorkspaceProvider {
    let mut options = f.options();
    options.rank_signals = signals;
    WorkspaceProvider::open(f.dir.path(), options)
        .expect("open workspace")
        .0
}

/// Distinct files of the answer, in rank order.
fn files(p: &WorkspaceProvider, goal: &str) -> Vec<String> {
    let r = ask(p, &q(goal));
    let mut out: Vec<String> = Vec::new();
    for id in ids(&r) {
        let file = id.split('#').next().unwrap_or_default().to_owned();
        if !out.contains(&file) {
            out.push(file);
        }
    }
    out
}

/// Assert that `goal`'s first file is `want`; `why` (empty, or ending in
/// ": ") leads the message, which then shows the files.
fn assert_first(p: &WorkspaceProvider, goal: &str, want: &str, why: &str) {
    let got = files(p, goal);
    assert_eq!(got.first().map(String::as_str), Some(want), "{why}{got:?}");
}

fn first_file(p: &WorkspaceProvider, goal: &str) -> String {
    files(p, goal)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no frames for {goal:?}"))
}

/// The answer's files for `goal` with every default step on, and with
/// `step` switched off.
fn files_with_and_without(f: &Fixture, goal: &str, step: &str) -> (Vec<String>, Vec<String>) {
    let on = files(&open_with(f, RerankSignals::default()), goal);
    let off = files(&open_with(f, without(step)), goal);
    (on, off)
}

/// The default with `step` (off by default) switched on.
fn with_step(step: &str) -> RerankSignals {
    let mut s = RerankSignals::default();
    *s.flag(step)
        .unwrap_or_else(|| panic!("unknown step {step}")) = true;
    s
}

fn without(step: &str) -> RerankSignals {
    let mut s = RerankSignals::default();
    *s.flag(step)
        .unwrap_or_else(|| panic!("unknown step {step}")) = false;
    s
}

/// The reconnect logic the semantic tests look for: it shares only
/// `server` with their goals, and the model places it near them.
const RECONNECT: &str = "/// Reconnect to the server after a timeout, with exponential backoff between attempts.\npub fn reconnect_with_backoff(max_attempts: u32, delay_ms: u64) -> u64 {\n    let retry_delay = delay_ms * u64::from(max_attempts);\n    retry_delay\n}\n";

/// A symbol lookup whose word is everywhere: the users of `Context` mention
/// it far more often than its one-line definition does.
fn context_fixture() -> Fixture {
    let f = Fixture::empty();
    f.write(
        "web.go",
        "package web\n\ntype Context struct {\n\tpath string\n}\n",
    );
    let mut handlers = String::from("package web\n\n");
    for i in 0..6 {
        handlers.push_str(&format!(
            "// contextFor{i} reads the context: context in, context out.\nfunc contextFor{i}(c *Context) *Context {{\n\treturn c // context\n}}\n\n"
        ));
    }
    f.write("context_handlers.go", &handlers);
    f
}

#[test]
fn a_one_word_symbol_lookup_returns_its_definition_first() {
    let f = context_fixture();
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(first_file(&on, "Context"), "web.go");
    assert_eq!(
        first_file(&on, "context"),
        "web.go",
        "case does not hide the definition"
    );
    let off = open_with(&f, without("definitions"));
    assert_ne!(
        first_file(&off, "Context"),
        "web.go",
        "without the definition step the heavy users of the word win"
    );
}

#[test]
fn a_one_character_identifier_finds_its_definition() {
    let f = Fixture::empty();
    f.write(
        "src/short.rs",
        "/// The gravity constant, in short.\npub fn g() -> f64 {\n    9.81\n}\n",
    );
    f.write("src/other.rs", "pub fn other() -> u32 {\n    1\n}\n");
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(files(&on, "g"), vec!["src/short.rs".to_owned()]);
    let off = open_with(&f, without("definitions"));
    assert!(
        files(&off, "g").is_empty(),
        "one character is below the lexical index's token length"
    );
}

const RETRY_RS: &str = "/// Retry the request with backoff.\n\
pub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n";

const RETRY_README: &str =
    "# Retry documentation\n\nEvery request is retried with exponential backoff: \
the backoff doubles on each retry, so a retried request waits for the backoff before the \
next retry of the request.\n";

#[test]
fn code_outranks_docs_that_repeat_the_goal_unless_the_goal_asks_for_docs() {
    let f = Fixture::empty();
    f.write("src/retry.rs", RETRY_RS);
    f.write("README.md", RETRY_README);
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(
        first_file(&on, "retry a request with exponential backoff"),
        "src/retry.rs"
    );
    assert_eq!(
        first_file(
            &on,
            "retry documentation: how long does a retried request wait"
        ),
        "README.md",
        "a goal naming the docs gets them"
    );
    let off = open_with(&f, without("roles"));
    assert_eq!(
        first_file(&off, "retry a request with exponential backoff"),
        "README.md",
        "without roles the README's repetitions win"
    );
}

#[test]
fn a_goal_about_the_changelog_still_finds_the_changelog() {
    let f = Fixture::empty();
    f.write("src/retry.rs", RETRY_RS);
    f.write(
        "CHANGELOG.md",
        "# Changelog\n\n## 2.0.0\n\n- Breaking: retry_with_backoff now doubles the wait.\n",
    );
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(
        first_file(&on, "which breaking change was made to the retry backoff"),
        "CHANGELOG.md"
    );
}

#[test]
fn tests_and_examples_rank_below_the_implementation() {
    let f = Fixture::empty();
    f.write(
        "src/retry.rs",
        "/// Retry the request with exponential backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
    );
    f.write(
        "examples/retry_backoff.rs",
        "// Example: retry a request with exponential backoff.\n\
         fn main() {\n    // retry with backoff, backoff, backoff\n    let _ = retry_with_backoff(3); // exponential backoff retry request\n}\n",
    );
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(
        first_file(&on, "retry a request with exponential backoff"),
        "src/retry.rs"
    );
    assert_eq!(
        first_file(&on, "an example of retry with exponential backoff"),
        "examples/retry_backoff.rs"
    );
    let off = open_with(&f, without("roles"));
    assert_eq!(
        first_file(&off, "retry a request with exponential backoff"),
        "examples/retry_backoff.rs"
    );
}

/// An implementation that holds two of the goal's four words, and a test
/// file that says all four over and over (never as the goal's phrase), as
/// tests of it do.
fn tested_retry_fixture() -> Fixture {
    let f = Fixture::empty();
    f.write(
        "src/policy.rs",
        "/// Retry with backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
    );
    let mut test = String::from("#[test]\nfn retries() {\n");
    for _ in 0..3 {
        test.push_str("    // exponential backoff: each request retry doubles the backoff\n");
    }
    test.push_str("    assert_eq!(retry_with_backoff(3), 6);\n}\n");
    f.write("tests/retries.rs", &test);
    f
}

/// `test_files` is off by default since issue 24 (it cost the third-party
/// tuning half 0.004 NDCG@10); switched on here, and `CGP_RANK_SIGNALS_ON`
/// switches it on in the product.
#[test]
fn a_test_file_ranks_below_the_implementation_even_when_it_repeats_the_goal() {
    let f = tested_retry_fixture();
    let goal = "retry a request with exponential backoff";
    let on = open_with(&f, with_step("test_files"));
    assert_first(&on, goal, "src/policy.rs", "");
    assert_eq!(
        first_file(&on, "tests of the request retry with exponential backoff"),
        "tests/retries.rs",
        "a goal naming tests gets them"
    );
    let off = open_with(&f, RerankSignals::default());
    assert_first(
        &off,
        goal,
        "tests/retries.rs",
        "with the test factor alone the repetitions win: ",
    );
}

#[test]
fn a_pasted_phrase_found_in_a_test_file_is_not_demoted_further() {
    let f = tested_retry_fixture();
    let goal = "each request retry doubles the backoff";
    let score = |p: &WorkspaceProvider| {
        let r = ask(p, &q(goal));
        let frame = r.frames.first().expect("an answer");
        assert!(frame.id.starts_with("tests/retries.rs#"), "{}", frame.id);
        frame.score
    };
    let on = open_with(&f, with_step("test_files"));
    let off = open_with(&f, RerankSignals::default());
    assert!(
        (score(&on) - score(&off)).abs() < 1e-6,
        "the phrase's chunk keeps the test factor: {} against {}",
        score(&on),
        score(&off)
    );
}

#[test]
fn a_goal_describing_code_gets_code_before_docs_and_a_question_may_get_docs() {
    let f = Fixture::empty();
    f.write(
        "src/policy.rs",
        "/// Backoff between attempts.\npub fn next_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
    );
    f.write(
        "docs/guide.md",
        "# Guide\n\nExponential backoff: each request retry doubles the backoff of the request.\n",
    );
    let description = "retry a request with exponential backoff";
    let question = "how is a request retried with exponential backoff?";
    // Measured with the semantic signal off on both sides: in a two-file
    // fixture the model's lift of the code file outweighs the docs factor
    // this test is about.
    // `code_goals` is off by default since issue 24 (it gained nothing on
    // the third-party tuning half); switched on here.
    let base = RerankSignals {
        semantic: false,
        code_goals: true,
        ..RerankSignals::default()
    };
    let on = open_with(&f, base);
    assert_first(&on, description, "src/policy.rs", "");
    assert_first(
        &on,
        question,
        "docs/guide.md",
        "a question keeps the docs factor: ",
    );
    let off = open_with(
        &f,
        RerankSignals {
            code_goals: false,
            ..base
        },
    );
    assert_first(
        &off,
        description,
        "docs/guide.md",
        "with the docs factor alone the guide wins: ",
    );
}

#[test]
fn a_file_with_several_matching_chunks_beats_a_file_with_one() {
    let f = Fixture::empty();
    // One chunk a little stronger than any single chunk of the parser…
    f.write(
        "src/misc.rs",
        "/// Parse a header value: parse the header value.\npub fn misc(x: u32) -> u32 {\n    x\n}\n",
    );
    // … but the parser is about the goal throughout.
    let mut parser = String::new();
    for part in ["name", "line", "folding", "case"] {
        parser.push_str(&format!(
            "/// Parse a header value ({part}).\npub fn read_{part}(x: u32) -> u32 {{\n    x\n}}\n\n"
        ));
    }
    f.write("src/parser.rs", &parser);
    let goal = "parse a header value";
    // Measured with file focus off on both sides: focus divides the summed
    // score by the file's chunk count, and this fixture's two files differ
    // in size (the focus test below covers that division).
    let base = RerankSignals {
        file_focus: false,
        ..RerankSignals::default()
    };
    let on = open_with(&f, base);
    assert_first(&on, goal, "src/parser.rs", "");
    let off = open_with(
        &f,
        RerankSignals {
            coherence: false,
            ..base
        },
    );
    assert_first(&off, goal, "src/misc.rs", "");
}

/// Pasted text is found where it is written: the coherence step lifts a
/// file by how much of it matches the goal, but for an error message held
/// verbatim by one chunk, a sibling file whose two chunks hold its words
/// out of order is no better an answer. For pasted text the share stays at
/// 0.25 (`PASTED_COHERENCE_SHARE`) where other goals get 0.5; at 0.5 the
/// sibling wins here, as error-message goals lost their raisers on the
/// generated benchmark set.
#[test]
fn a_pasted_error_message_finds_its_raiser_over_a_file_sharing_its_words() {
    let f = Fixture::empty();
    f.write(
        "src/raise.rs",
        "pub fn check(n: u32) -> Result<u32, String> {\n    if n == 0 {\n        return Err(\"connection reset while reading the frame header\".into());\n    }\n    Ok(n)\n}\n",
    );
    f.write(
        "src/frames.rs",
        "/// Read the frame header from the connection.\npub fn frame_step_0(x: u32) -> u32 {\n    x\n}\n\n\
         /// Step the frame header of the connection is reset while reading.\npub fn frame_step_1(x: u32) -> u32 {\n    x + 1\n}\n",
    );
    // Unrelated files, so that the goal's words are rare as in a real tree.
    for (i, word) in [
        "pixel", "colour", "palette", "shade", "gamma", "alpha", "blend", "canvas", "stroke",
        "fill", "brush", "layer",
    ]
    .iter()
    .enumerate()
    {
        f.write(
            &format!("src/paint_{i}.rs"),
            &format!("/// Paint the {word} of a widget.\npub fn paint_{word}(x: u32) -> u32 {{\n    x * {i}\n}}\n"),
        );
    }
    let goal = "connection reset while reading the frame header";
    let (on, off) = files_with_and_without(&f, goal, "pasted_coherence");
    assert_eq!(
        on.first().map(String::as_str),
        Some("src/raise.rs"),
        "{on:?}"
    );
    assert_eq!(
        off.first().map(String::as_str),
        Some("src/frames.rs"),
        "with the full share the sibling wins: {off:?}"
    );
}

#[test]
fn one_file_cannot_fill_the_answer() {
    let f = Fixture::empty();
    let mut big = String::new();
    for i in 0..8 {
        big.push_str(&format!(
            "/// Decode a frame header, variant {i}.\npub fn decode_frame_header_{i}(x: u32) -> u32 {{\n    x\n}}\n\n"
        ));
    }
    f.write("src/decode.rs", &big);
    f.write(
        "src/frame.rs",
        "/// Decode a frame header.\npub struct Header {\n    pub len: u32,\n}\n",
    );
    let goal = "decode frame header";
    let on = open_with(&f, RerankSignals::default());
    let r = ask(&on, &q(goal));
    let second_file = ids(&r)
        .get(1)
        .map(|id| id.split('#').next().unwrap_or_default().to_owned());
    assert_eq!(second_file.as_deref(), Some("src/frame.rs"));
    let off = open_with(&f, without("saturation"));
    let r = ask(&off, &q(goal));
    let second_file = ids(&r)
        .get(1)
        .map(|id| id.split('#').next().unwrap_or_default().to_owned());
    assert_eq!(second_file.as_deref(), Some("src/decode.rs"));
}

/// Vocabulary mismatch: the goal says in prose what the implementation says
/// in other words. Lexically both files share one goal word (`server`), and
/// the shorter, unrelated one wins on BM25's length normalisation; the
/// semantic signal (on when the workspace is opened with `semantic`) puts
/// first the implementation, whose words the static model places near the
/// goal's.
#[test]
fn the_semantic_signal_finds_code_that_shares_no_word_with_the_goal() {
    // The short comment's filler (see `NEAR_IN_MEANING_FILLER`): long
    // enough that the signal overturns its lead, which stands without it.
    let f = near_in_meaning_fixture_with(1, 13);
    let goal = "try again later when the server does not answer";
    let open = |semantic: bool| {
        let mut options = f.options();
        options.semantic = semantic;
        WorkspaceProvider::open(f.dir.path(), options)
            .expect("open workspace")
            .0
    };
    let on = files(&open(true), goal);
    assert_eq!(
        on.first().map(String::as_str),
        Some("src/backoff.rs"),
        "{on:?}"
    );
    let off = files(&open(false), goal);
    assert_ne!(
        off.first().map(String::as_str),
        Some("src/backoff.rs"),
        "{off:?}"
    );
}

/// Vocabulary mismatch against a lexical near-miss: the distractor holds
/// two of the goal's words (`server`, `answer`), the implementation only
/// one, so BM25 prefers the distractor by more than the
/// semantic signal's base weight can make up. No chunk holds most of the
/// goal's words, which is when the signal weighs more
/// (`W_SEMANTIC_UNCOVERED`), and then the implementation comes first.
#[test]
fn the_semantic_signal_weighs_more_when_no_chunk_holds_the_goals_words() {
    let f = Fixture::empty();
    f.write("src/backoff.rs", RECONNECT);
    f.write(
        "src/colour.rs",
        "/// Blend the colours of a server pixel with the server palette.\npub fn blend_pixel_colours(a: u8, palette: u8) -> u8 {\n    a / 2 + palette / 2\n}\n",
    );
    // The goal's other words are in the workspace, but each in long chunks
    // of its own: no chunk holds more than one of them. Unrelated files keep
    // every goal word rare enough to be searched.
    for i in 0..10 {
        f.write(
            &format!("src/shapes_{i}.rs"),
            &format!("/// The area of shape {i}.\npub fn area_{i}(w: u32, h: u32) -> u32 {{\n    w * h\n}}\n"),
        );
    }
    for (file, word) in [
        ("src/queue.rs", "again"),
        ("src/stock.rs", "again"),
        ("src/log.rs", "later"),
        ("src/audit.rs", "later"),
        ("src/form.rs", "answer"),
        ("src/survey.rs", "answer"),
    ] {
        f.write(
            file,
            &format!(
                "/// Counts the items of the inventory table by shelf, colour, size, weight and price, {word}.\npub fn count_items(shelf: u32, colour: u32, size: u32, weight: u32, price: u32) -> u32 {{\n    let total = shelf + colour + size + weight + price;\n    let average = total / 5;\n    average + shelf * size - weight / price.max(1)\n}}\n"
            ),
        );
    }
    let goal = "try again later when the server does not answer";
    // Off by default (see `RerankSignals::semantic_uncovered`): on here.
    let with_it = RerankSignals {
        semantic_uncovered: true,
        ..RerankSignals::default()
    };
    let on = files(&open_with(&f, with_it), goal);
    assert_eq!(
        on.first().map(String::as_str),
        Some("src/backoff.rs"),
        "{on:?}"
    );
    let off = files(&open_with(&f, RerankSignals::default()), goal);
    assert_eq!(
        off.first().map(String::as_str),
        Some("src/colour.rs"),
        "{off:?}"
    );
}

/// Two files about the goal's word, one in a folder named after it, one
/// named after it; the first says the word once more.
#[test]
fn a_file_named_after_the_goal_beats_a_file_in_a_folder_named_after_it() {
    let f = Fixture::empty();
    f.write(
        "src/retry/policy.rs",
        "/// Retry the request, retry it.\npub fn next(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
    );
    f.write(
        "src/net/retry.rs",
        "/// Retry the request.\npub fn again(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
    );
    let goal = "retry the request";
    let (on, off) = files_with_and_without(&f, goal, "file_name");
    assert_eq!(on[0], "src/net/retry.rs", "{on:?}");
    assert_eq!(
        off[0], "src/retry/policy.rs",
        "without the file-name share the folder counts as much: {:?}",
        off
    );
}

/// A hub file whose sixty-four functions include three about the goal, and
/// a small file that is about the goal throughout. (The division is by the
/// chunk count to the power 0.25 since issue 24, so the hub must be large
/// for its summed score to fall below the small file's.)
#[test]
fn a_focused_file_beats_a_hub_file_that_matches_in_a_few_of_many_chunks() {
    let f = Fixture::empty();
    let mut hub = String::new();
    for i in 0..64 {
        let doc = if i < 3 {
            "Decode the frame header."
        } else {
            "Something else entirely."
        };
        hub.push_str(&format!(
            "/// {doc}\npub fn step_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
        ));
    }
    f.write("src/engine.rs", &hub);
    let mut focused = String::new();
    for i in 0..2 {
        focused.push_str(&format!(
            "/// Decode the frame header, part {i}.\npub fn part_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
        ));
    }
    f.write("src/wire.rs", &focused);
    let goal = "decode the frame header";
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(files(&on, goal)[0], "src/wire.rs", "{:?}", files(&on, goal));
    let off = open_with(&f, without("file_focus"));
    assert_first(
        &off,
        goal,
        "src/engine.rs",
        "without file focus the hub's summed score wins: ",
    );
}

/// The relevance floor: a file that shares one common goal word with the
/// goal, buried in unrelated text, is left out instead of filling the
/// budget; with the floor off it is served.
#[test]
fn a_file_far_below_the_best_is_left_out_not_used_to_fill_the_budget() {
    let f = Fixture::empty();
    f.write(
        "retry.rs",
        "/// Retry a request with exponential backoff until the deadline.\n\
         pub fn retry_with_backoff(request: Request, deadline: Deadline) -> Response {\n\
         \x20   let mut backoff = Backoff::exponential();\n\
         \x20   loop { if let Ok(r) = send(&request) { return r; } backoff.wait(deadline); }\n\
         }\n",
    );
    let mut other = String::new();
    for i in 0..40 {
        other.push_str(&format!(
            "pub fn render_widget_{i}(canvas: &mut Canvas, colour: Colour) {{ canvas.fill(colour); canvas.stroke(colour); }}\n"
        ));
    }
    other.push_str("pub fn request_repaint(canvas: &mut Canvas) { canvas.dirty = true; }\n");
    f.write("widgets.rs", &other);
    let goal = "retry a request with exponential backoff until the deadline";
    let on = open_with(&f, RerankSignals::default());
    assert_eq!(files(&on, goal), vec!["retry.rs".to_owned()]);
    let off = open_with(&f, without("floor"));
    let served = files(&off, goal);
    assert_eq!(served.first().map(String::as_str), Some("retry.rs"));
    assert!(
        served.contains(&"widgets.rs".to_owned()),
        "without the floor the weak match fills the answer: {served:?}"
    );
}

/// The reconnect logic the model places nearest a question about retrying,
/// and a short comment that holds the question's one shared word
/// (`server`) `repeats` times: lexically the comment wins.
fn near_in_meaning_fixture(repeats: usize) -> Fixture {
    near_in_meaning_fixture_with(repeats, NEAR_IN_MEANING_FILLER)
}

/// Words of the short comment after its `server`s: they set how large the
/// comment's lexical lead is (a longer chunk scores less per word under
/// BM25's length normalisation), so each test below sits where the step it
/// is about decides the first file. Chosen when BM25 became k1 = 1.5,
/// b = 1 and the coherence share 0.5 (issue 24), which widened the lead of
/// a short chunk holding the goal's one shared word.
const NEAR_IN_MEANING_FILLER: usize = 9;

/// [`near_in_meaning_fixture`] with the first `filler` of
/// [`FILLER_WORDS`] after the comment's `server`s.
fn near_in_meaning_fixture_with(repeats: usize, filler: usize) -> Fixture {
    let f = Fixture::empty();
    f.write("src/backoff.rs", RECONNECT);
    let comment = vec!["server"; repeats].join(", ");
    let words: String = FILLER_WORDS[..filler]
        .iter()
        .map(|w| format!(" {w}"))
        .collect();
    f.write(
        "src/colour.rs",
        &format!("/// A {comment} pixel{words}.\npub fn blend_pixel_colours(a: u8, palette: u8) -> u8 {{\n    let mixed_shade = a / 2 + palette / 2;\n    mixed_shade\n}}\n"),
    );
    f
}

/// Words none of the tests' goals hold, for the short comment.
const FILLER_WORDS: [&str; 16] = [
    "with", "the", "palette", "shade", "tone", "mixed", "display", "rounding", "darker", "colour",
    "space", "gamma", "linear", "blend", "alpha", "channel",
];

const RETRY_QUESTION: &str = "how do we try again later when the server does not answer?";

/// With one `server` in the short comment, the fused chunk-level semantic
/// score alone does not overturn its lexical lead; the question-semantics
/// step lifts the file the model places nearest the question as a whole.
/// The same goal written as a description of code is left to the chunk
/// scores. (Question agreement, step 7, is off on both sides: it would lift
/// the same file.)
#[test]
fn a_question_gets_the_file_nearest_it_in_meaning_first() {
    let f = near_in_meaning_fixture(1);
    let base = RerankSignals {
        question_agreement: false,
        ..RerankSignals::default()
    };
    let on = open_with(&f, base);
    assert_first(&on, RETRY_QUESTION, "src/backoff.rs", "");
    let description = "try again later when the server does not answer";
    assert_first(
        &on,
        description,
        "src/colour.rs",
        "a description of code is not lifted: ",
    );
    let off = open_with(
        &f,
        RerankSignals {
            question_semantic: false,
            ..base
        },
    );
    assert_first(
        &off,
        RETRY_QUESTION,
        "src/colour.rs",
        "without the step the short comment's lexical lead stands: ",
    );
}

/// With `server` twice in the short comment, its lead is larger than the
/// question-semantics lift; the reconnect file is both about the
/// question's words throughout (its coherence share) and the nearest in
/// meaning, and question agreement, which needs both, puts it first.
#[test]
fn a_question_gets_the_file_both_kinds_of_evidence_agree_on_first() {
    let f = near_in_meaning_fixture(2);
    let (on, off) = files_with_and_without(&f, RETRY_QUESTION, "question_agreement");
    assert_eq!(on[0], "src/backoff.rs", "{on:?}");
    assert_eq!(
        off[0], "src/colour.rs",
        "question semantics alone does not overturn the comment's lead: {:?}",
        off
    );
}
