//! Ranking: BM25 over chunk text (each goal word with its indexed
//! inflections, see [`crate::query_terms`]), a symbol-name boost, a path
//! signal (the goal's words naming the file's directories or name), and
//! graph proximity to the query's anchors (personalised PageRank),
//! normalised into [0, 1]. Test and benchmark code is demoted unless the
//! goal asks for tests.
//!
//! G3/G4: when the query has anchors and some frame is *anchored* (its `uri`
//! equals an anchor, or one of its relations' `target_uri` does), every
//! anchored candidate is returned in the upper half of the score range and
//! every unanchored one in the lower half, so anchored frames always rank
//! above unanchored ones; proximity beyond one hop still lifts unanchored
//! neighbours within their half (G3).

use std::collections::{HashMap, HashSet, VecDeque};

use foldhash::{HashMap as FastMap, HashSet as FastSet};

use crate::graph::Graph;
use crate::index::ChunkRecord;
use crate::query_terms::{asks_for_tests, concepts, prose_words, query_words, ConceptMatcher};
use crate::rerank::{rerank, Candidate, QueryShape, RerankSignals};
use crate::uri::parse_anchor;
use base::{Base, BaseInputs, BaseScorer};

/// BM25's term-frequency saturation and length normalisation. The textbook
/// 1.2 / 0.75 were chosen for prose documents; chunks of code differ in
/// length far more (a one-line constant against a 150-line function), and
/// a long chunk holds a goal's word many times without being more about it.
/// Full normalisation (b = 1) with a slower saturation (k1 = 1.5) ranks
/// the chunk that is *about* the words above the long one that merely
/// repeats them. Issue 24, chosen on the third-party set's tuning half with
/// the coherence share below (one candidate: 0.847 -> 0.858 NDCG@10; our
/// tuning half 0.847 -> 0.849), the held-out halves read once: third-party
/// 0.856 -> 0.869, ours 0.857 -> 0.857. Alone on the tuning halves, b 0.9 /
/// 1.0 gained +0.001 / +0.003 on both sets and b 0.5 lost on both.
const K1: f32 = 1.5;
const B: f32 = 1.0;
/// Most query terms considered (a pasted file as query stays cheap).
const MAX_QUERY_TERMS: usize = 32;
/// Weight of each signal in the combined score.
const W_LEXICAL: f32 = 0.6;
const W_NAME: f32 = 0.25;
const W_PROXIMITY: f32 = 0.15;
/// Weight of the path signal: enough to order chunks of similar lexical
/// strength by whether their file is *about* the goal's words, too small
/// to lift a file on its name alone. 0.15 → 0.25 on the retrieval
/// benchmark's tuning half: NDCG@10 +0.005 alone (symbol lookups and
/// architecture goals, whose answer files are often named after the
/// concept).
const W_PATH: f32 = 0.25;
/// Extra weight, relative to the path signal, of the goal's words named by
/// the file's *name* (not its directories): a file named after the concept
/// (`throttle.js`, `basic_auth.go`, `repair.cc`) is more often the answer
/// than any file in a folder named after it, whose siblings share the
/// folder. On the retrieval benchmark's tuning half 0.3 to 1.0 all gained
/// (+0.004 to +0.005 NDCG@10; 1.5 lost); 0.6 is the middle of that range.
const W_FILE_NAME: f32 = 0.6;
/// Exponent of the coordination factor (the share of the goal's distinct
/// words a chunk holds). 2 punished a chunk missing one word of a long
/// prose goal too hard, when prose goals carry words the code never holds.
/// On the retrieval benchmark's tuning half 1.5 measured best (+0.008
/// NDCG@10 alone) but cost the generated doc-sentence set 0.007 MRR (those
/// goals are matched whole); 1.75 keeps that set unchanged and, with the
/// path weight above, gains +0.007.
const COVERAGE_EXPONENT: f32 = 1.75;
/// Inflections held by more than `1 / VARIANT_MAX_DF_SHARE` of all chunks
/// are not searched...
const VARIANT_MAX_DF_SHARE: f32 = 20.0;
/// ... but never fewer than this many chunks: a small workspace has no
/// long postings to avoid, and every variant is informative there.
const VARIANT_MIN_DF_CAP: f32 = 8.0;
/// Score factor for test and benchmark code when the goal does not ask for
/// tests: they repeat the words of what they test, but a goal about how
/// something works wants the thing itself first.
const TEST_CODE_FACTOR: f32 = 0.7;
/// Personalised PageRank: teleport probability, push threshold, work bound.
const PPR_ALPHA: f32 = 0.2;
const PPR_EPSILON: f32 = 1e-4;
const PPR_MAX_PUSHES: usize = 4000;
/// Graph-only candidates (no lexical match) kept from the proximity walk.
const MAX_PROXIMITY_ONLY: usize = 50;
/// Lexical candidates kept for combined scoring (a query never needs more:
/// answers are bounded by `max_frames` and budgets far below this).
const MAX_LEXICAL_CANDIDATES: usize = 2000;

/// Weight of the semantic signal for prose goals, and for symbol lookups
/// (where the name carries the query and the model adds little). 0.07 with
/// the contrastively trained model v3 (retrieval benchmark, tuning half:
/// 0.873 against 0.872 at 0.1, 0.871 at 0.06; v2 lost at 0.07, 0.867
/// against 0.870 at 0.1): a model that ranks code for prose better on its
/// own needs less weight beside BM25 to lift the same chunks.
const W_SEMANTIC: f32 = 0.07;
const W_SEMANTIC_IDENTIFIER: f32 = 0.05;
/// Extra weight of the semantic signal for a prose goal, times the share of
/// the goal's words (those the workspace holds) that even the best lexical
/// matches lack: where the
/// code says in other words what the goal says ("limit how often a
/// callback can fire" for `throttle`), BM25 has little to go on and the
/// model is the better guide; where a chunk holds every goal word, the
/// model's neighbours mostly displace it. On the retrieval benchmark's
/// tuning half, with the shipped doc-comment-aligned model (v2): 0.864
/// NDCG@10 against 0.860 without it (held-out 0.850 against 0.847); with a
/// 192-dimensional sibling 0.2 / 0.3 / 0.4 / 0.8 gave 0.865 / 0.864 /
/// 0.864 / 0.859. With the previous model (v1) it did not pay (0.860 at
/// 0.3), and with v1's recipe on the same corpus it lost (0.857 / 0.855 at
/// 0.2 / 0.4): the weight is worth what the model is.
const W_SEMANTIC_UNCOVERED: f32 = 0.3;
/// Best lexical matches whose coverage of the goal's words is read for
/// `W_SEMANTIC_UNCOVERED`.
const COVERAGE_CANDIDATES: usize = 20;
/// Best semantic matches considered (as candidates and for the signal).
pub(crate) const SEMANTIC_CANDIDATES: usize = 30;

/// Weight of an exact phrase match (the query's words, in order, inside the
/// chunk: a pasted error message or string literal). Lifts the raw score
/// towards 1 by this share of the remaining headroom, so scores stay in [0, 1].
const W_PHRASE: f32 = 0.5;
/// Best lexical candidates checked for the exact phrase (each check reads
/// the chunk's bytes).
const PHRASE_CANDIDATES: usize = 20;
/// Fewest query words for which a phrase match means something.
const PHRASE_MIN_WORDS: usize = 3;

/// The words of `text` for phrase matching: lowercase alphanumeric runs, in
/// order, punctuation and format placeholders (`{}`) dropped.
pub fn phrase_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `words` occur contiguously, in order, in `haystack_words`.
pub fn contains_phrase(haystack_words: &[String], words: &[String]) -> bool {
    !words.is_empty() && haystack_words.windows(words.len()).any(|w| w == words)
}

/// A ranked candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// The chunk slot.
    pub slot: u32,
    /// Score in [0, 1].
    pub score: f32,
    /// Whether the frame is anchored (G4).
    pub anchored: bool,
}

/// Rank chunks for `text` and `anchors`. `accept` filters chunks before
/// scoring (Q1 kinds, `as_of`), so filtered chunks neither appear nor
/// distort normalisation.
pub fn search(
    graph: &Graph<'_>,
    text: &str,
    anchors: &[String],
    accept: &dyn Fn(&ChunkRecord) -> bool,
) -> Vec<Ranked> {
    search_with_phrase(graph, text, anchors, accept, &|_| false)
}

/// [`search`], plus an exact-phrase signal: when the query has at least
/// `PHRASE_MIN_WORDS` (3) words, `has_phrase(slot)` is asked for the best
/// lexical candidates (it reads the chunk's bytes and answers whether they
/// hold the query's words in order, see [`phrase_words`]); matching chunks
/// are lifted, the innermost one when matches nest (a function, not the
/// `impl` around it). The G4 halves are kept.
pub fn search_with_phrase(
    graph: &Graph<'_>,
    text: &str,
    anchors: &[String],
    accept: &dyn Fn(&ChunkRecord) -> bool,
    has_phrase: &dyn Fn(u32) -> bool,
) -> Vec<Ranked> {
    search_with_signals(
        graph,
        text,
        anchors,
        accept,
        has_phrase,
        &[],
        RerankSignals::default(),
    )
}

/// [`search_with_phrase`] with the ranking layer's steps chosen one by one
/// (see [`crate::rerank`]): the benchmark's ablations and the tests that
/// prove each step matters switch one off.
pub fn search_with_signals(
    graph: &Graph<'_>,
    text: &str,
    anchors: &[String],
    accept: &dyn Fn(&ChunkRecord) -> bool,
    has_phrase: &dyn Fn(u32) -> bool,
    semantic: &[(u32, f32)],
    signals: RerankSignals,
) -> Vec<Ranked> {
    let semantic = || std::borrow::Cow::Borrowed(semantic);
    search_awaiting(graph, text, anchors, accept, has_phrase, semantic, signals)
}

/// [`search_with_signals`] with the semantic matches asked for only after
/// the BM25 part, which does not read them: an answer computes them on
/// another thread meanwhile (`semantic_overlap.rs`). Same ranking.
pub(crate) fn search_awaiting<'s>(
    graph: &Graph<'_>,
    text: &str,
    anchors: &[String],
    accept: &dyn Fn(&ChunkRecord) -> bool,
    has_phrase: &dyn Fn(u32) -> bool,
    semantic: impl FnOnce() -> std::borrow::Cow<'s, [(u32, f32)]>,
    signals: RerankSignals,
) -> Vec<Ranked> {
    let index = graph.index;
    let accepted_record = |c: &ChunkRecord| accept(c);
    let accepted = |slot: u32| index.chunk(slot).is_some_and(|(_, c)| accept(c));
    let words = query_words(text, MAX_QUERY_TERMS);
    let n = index.chunk_count().max(1) as f32;
    // An inflection in more than one chunk in twenty is dropped: its idf is
    // low and its postings are long, while the word as written still counts.
    let variant_df = |t: &str| {
        let df = index.df(t);
        if df as f32 > (n / VARIANT_MAX_DF_SHARE).max(VARIANT_MIN_DF_CAP) {
            0
        } else {
            df
        }
    };
    let concepts = concepts(&words, &prose_words(text), &variant_df);
    let wants_tests = asks_for_tests(&words);
    let avg = index.avg_len();
    // Dense accumulators, all zero: one float per slot is cheaper than
    // hashing on common terms whose postings touch a large share of the
    // index; and which concepts each slot matched, one bit per concept (at
    // most MAX_QUERY_TERMS = 32 of them). Reused from this thread's last
    // search (see `Accumulators`).
    let mut scratch = Accumulators::take(index.slot_capacity());
    let Accumulators { acc, hits, written } = &mut scratch;
    let mut touched: Vec<u32> = Vec::new();
    // (concept bit, term, idf × weight, df) for every indexed term.
    let mut weighted: Vec<(u32, &str, f32, u32)> = concepts
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.terms.iter().map(move |(t, w)| (i, t, w)))
        .filter_map(|(i, t, w)| {
            let df = index.df(t);
            (df > 0).then(|| {
                let idf = (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
                (1u32 << i, t.as_str(), idf * w, df)
            })
        })
        .collect();
    // A term in more than a fifth of all chunks barely discriminates but
    // costs the most: dropped when rarer terms carry the query.
    if weighted.iter().any(|w| (w.3 as f32) <= n / 5.0) {
        weighted.retain(|w| (w.3 as f32) <= n / 5.0);
    }
    for &(bit, t, idf, _) in &weighted {
        for (slot, tf, len) in index.postings(t) {
            let tf = tf as f32;
            let w = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len as f32 / avg));
            let cell = &mut acc[slot as usize];
            if *cell == 0.0 {
                touched.push(slot);
            }
            *cell += w;
            let mask = &mut hits[slot as usize];
            if *mask == 0 {
                written.push(slot);
            }
            *mask |= bit;
        }
    }
    // Coordination: a chunk holding more of the query's distinct words beats
    // one repeating a few of them (an error message is matched whole); the
    // inflections of one word count once.
    let searched = weighted.iter().fold(0u32, |m, w| m | w.0);
    let query_terms = searched.count_ones().max(1) as f32;
    // The factor per number of words held (at most 32), computed once: a
    // common-word goal touches a large share of all chunks.
    let factors: Vec<f32> = (0..=32)
        .map(|k| (k as f32 / query_terms).min(1.0).powf(COVERAGE_EXPONENT))
        .collect();
    for &s in &touched {
        acc[s as usize] *= factors[hits[s as usize].count_ones() as usize];
    }
    // Only the best accepted lexical matches go on to the (costlier)
    // combined scoring.
    let touched = best_accepted(by_score(&touched, acc), &accepted);
    // The per-query maps and sets below hash slot numbers with foldhash:
    // SipHash (the std default) was a few percent of a query, and nothing
    // reads them in iteration order (candidates are sorted by slot first).
    let lexical: FastMap<u32, f32> = touched.iter().map(|&s| (s, acc[s as usize])).collect();
    let phrase_hits: FastSet<u32> = if phrase_words(text).len() >= PHRASE_MIN_WORDS {
        innermost(
            index,
            touched
                .iter()
                .take(PHRASE_CANDIDATES)
                .copied()
                .filter(|&s| has_phrase(s))
                .collect(),
        )
    } else {
        FastSet::default()
    };
    // The largest share of the goal's words one of the best matches holds
    // (read only by `W_SEMANTIC_UNCOVERED`, off by default).
    let best_coverage = if signals.semantic_uncovered {
        touched
            .iter()
            .take(COVERAGE_CANDIDATES)
            .map(|&s| hits[s as usize].count_ones() as f32 / query_terms)
            .fold(0.0f32, f32::max)
            .min(1.0)
    } else {
        0.0
    };
    scratch.give_back();

    let anchored = anchored_slots(graph, anchors);
    let proximity = if anchored.is_empty() {
        HashMap::new()
    } else {
        personalised_pagerank(graph, &anchored)
    };

    let mut candidates: FastSet<u32> = lexical.keys().copied().collect();
    candidates.extend(anchored.iter().copied().filter(|&s| accepted(s)));
    let mut by_proximity: Vec<(u32, f32)> = proximity
        .iter()
        .filter(|(s, _)| !candidates.contains(s) && accepted(**s))
        .map(|(&s, &p)| (s, p))
        .collect();
    by_proximity.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    candidates.extend(by_proximity.iter().take(MAX_PROXIMITY_ONLY).map(|x| x.0));
    let shape = QueryShape::of(text);
    // The semantic signal's weight should the matches be non-empty: it
    // does not depend on which they are, so the matches are asked for only
    // when it is above zero (a goal none of whose words the index holds,
    // or one found as a phrase, leaves the pass unread: an answer then
    // stops it, see `semantic_overlap.rs`).
    let weight_with_matches = if !signals.semantic {
        0.0
    } else if signals.model_alone {
        1.0
    } else if lexical.is_empty() {
        // A goal none of whose words the workspace holds (`xyzzy`, a word
        // from another code base) names nothing here: the model's nearest
        // chunks to it would be served as if they answered it.
        0.0
    } else if !phrase_hits.is_empty() {
        // Pasted text (a doc sentence, an error message) is found where it
        // is written; the model's neighbours of it are noise there. With
        // the signal on by default, this kept the generated doc-sentence
        // set from losing MRR@10 (0.899 → 0.890 without it, 0.903 with it).
        0.0
    } else if shape.identifier {
        W_SEMANTIC_IDENTIFIER
    } else if signals.semantic_uncovered {
        W_SEMANTIC + W_SEMANTIC_UNCOVERED * (1.0 - best_coverage)
    } else {
        W_SEMANTIC
    };
    let max_lex = lexical.values().copied().fold(0.0f32, f32::max);
    let whole_query = text.trim().to_lowercase();
    let matcher = ConceptMatcher::new(&concepts);
    let mut bases = BaseScorer::new(BaseInputs {
        index,
        matcher: &matcher,
        whole_query: &whole_query,
        lexical: &lexical,
        max_lex,
        proximity: &proximity,
        signals,
    });
    // The candidates known so far are scored before the semantic matches
    // are awaited, while the pass still reads rows on the other thread (the
    // answer's thread then claims what is left of it): nothing in a base
    // score depends on the matches, except through proximity's maximum,
    // which is over every candidate, so with anchors they wait. In slot
    // order, as all of them are below.
    let early: Vec<(u32, Base)> = if weight_with_matches > 0.0 && proximity.is_empty() {
        let mut slots: Vec<u32> = candidates.iter().copied().collect();
        slots.sort_unstable();
        slots.into_iter().map(|s| (s, bases.of(s))).collect()
    } else {
        Vec::new()
    };
    let semantic = if weight_with_matches > 0.0 {
        semantic()
    } else {
        drop(semantic);
        std::borrow::Cow::Borrowed(&[][..])
    };
    let semantic_weight = if semantic.is_empty() {
        0.0
    } else {
        weight_with_matches
    };
    // The best semantic matches, their cosine rescaled to [0, 1] between
    // the last kept and the best (cosines of a static model sit in a narrow
    // band; the order within it is the signal).
    let semantic_top: FastMap<u32, f32> = if semantic_weight > 0.0 {
        let kept: Vec<(u32, f32)> = semantic
            .iter()
            .filter(|(s, _)| accepted(*s))
            .take(SEMANTIC_CANDIDATES)
            .copied()
            .collect();
        let hi = kept.first().map_or(0.0, |x| x.1);
        let lo = kept.last().map_or(0.0, |x| x.1);
        let span = (hi - lo).max(1e-6);
        kept.into_iter()
            .map(|(s, c)| (s, ((c - lo) / span).clamp(0.0, 1.0)))
            .collect()
    } else {
        FastMap::default()
    };
    candidates.extend(semantic_top.keys().copied());

    let max_prox = candidates
        .iter()
        .filter_map(|s| proximity.get(s))
        .copied()
        .fold(0.0f32, f32::max);
    bases.set_max_proximity(max_prox);
    let any_anchored = candidates.iter().any(|s| anchored.contains(s));
    // In slot order, not the set's (per-process random) order: the layer
    // sums each file's scores in candidate order, and a float sum in a
    // different order differs in its last bits, which could reorder near
    // ties from one run to the next.
    let mut candidates: Vec<u32> = candidates.into_iter().collect();
    candidates.sort_unstable();
    let mut early = early.into_iter().peekable();
    let mut scored: Vec<Candidate> = candidates
        .into_iter()
        .map(|slot| {
            let base = match early.peek() {
                Some(&(s, base)) if s == slot => {
                    early.next();
                    base
                }
                _ => bases.of(slot),
            };
            let semantic = semantic_top.get(&slot).copied().unwrap_or(0.0);
            let phrase = phrase_hits.contains(&slot);
            Candidate {
                slot,
                score: base.with(semantic_weight * semantic, phrase, wants_tests),
                phrase,
                semantic,
            }
        })
        .collect();
    // `scored` is in slot order (the candidates were sorted above): a float
    // sum in hash-set order differed in its last bit from one process to the
    // next (a loaded index then answered with other scores than the built one).
    debug_assert!(scored.windows(2).all(|w| w[0].slot < w[1].slot));
    rerank(index, &shape, signals, &accepted_record, &mut scored);
    // The layer's boosts can lift scores above 1: back into [0, 1].
    let max_raw = scored.iter().map(|c| c.score).fold(0.0f32, f32::max);
    let scale = if max_raw > 1.0 { 1.0 / max_raw } else { 1.0 };
    let mut out: Vec<Ranked> = scored
        .into_iter()
        .map(|c| {
            let raw = (c.score * scale).clamp(0.0, 1.0);
            let is_anchored = anchored.contains(&c.slot);
            let score = match (any_anchored, is_anchored) {
                (false, _) => raw,
                (true, true) => 0.5 + 0.5 * raw,
                (true, false) => 0.5 * raw * 0.999,
            };
            Ranked {
                slot: c.slot,
                score: score.clamp(0.0, 1.0),
                anchored: is_anchored,
            }
        })
        .filter(|r| r.anchored || r.score > 0.0)
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.slot.cmp(&b.slot)));
    out
}

/// A search's BM25 accumulators: a score and a concept mask per slot,
/// all zero between searches.
///
/// Why kept: allocating and zeroing them for every search cost a pass over
/// the whole index (8 bytes a slot: 2.8 MB on a 16,000-file tree, and as
/// many fresh pages faulted in) while a query touches the slots of its
/// terms' postings only. A thread keeps its last search's pair and zeroes
/// only the slots that search wrote, so the cost follows the postings
/// read, not the tree. The price is memory: each thread that has searched
/// holds 8 bytes per slot of the largest index it searched (the serving
/// pool's few workers, 2.8 MB each on the 16k tree). A search that panics
/// drops the pair instead of giving it back, so none is ever reused dirty.
#[derive(Debug, Default)]
struct Accumulators {
    acc: Vec<f32>,
    hits: Vec<u32>,
    /// Every slot whose mask was set (each once): the slots to zero.
    written: Vec<u32>,
}

thread_local! {
    /// This thread's accumulators between searches (`None` while one runs).
    static ACCUMULATORS: std::cell::Cell<Option<Accumulators>> =
        const { std::cell::Cell::new(None) };
}

impl Accumulators {
    /// This thread's accumulators, taken out and sized to `slots`, all zero.
    fn take(slots: usize) -> Accumulators {
        let mut a = ACCUMULATORS.with(std::cell::Cell::take).unwrap_or_default();
        a.acc.resize(slots, 0.0);
        a.hits.resize(slots, 0);
        a
    }

    /// Zeroes what this search wrote and gives the accumulators back to the
    /// thread for its next search.
    fn give_back(mut self) {
        if self.written.len() > self.acc.len() / 8 {
            self.acc.fill(0.0);
            self.hits.fill(0);
        } else {
            for &s in &self.written {
                self.acc[s as usize] = 0.0;
                self.hits[s as usize] = 0;
            }
        }
        self.written.clear();
        debug_assert!(self.acc.iter().all(|&x| x == 0.0) && self.hits.iter().all(|&h| h == 0));
        ACCUMULATORS.with(|c| c.set(Some(self)));
    }
}

/// The best `MAX_LEXICAL_CANDIDATES` slots of `touched` that `accepted`
/// lets through, best first: exactly the filter-then-select of all of
/// them, but `accepted` (which reads each chunk's record) is asked only
/// of the best ones, in widening windows, not of every slot a common word
/// touched. Partial selection keeps each window O(n), sorting only it.
/// `touched` holds [`by_score`] keys.
fn best_accepted(mut touched: Vec<u64>, accepted: &dyn Fn(u32) -> bool) -> Vec<u32> {
    let mut window = MAX_LEXICAL_CANDIDATES * 2;
    loop {
        let whole = window >= touched.len();
        if !whole {
            touched.select_nth_unstable(window);
        }
        let n = window.min(touched.len());
        let head = &mut touched[..n];
        head.sort_unstable();
        let kept: Vec<u32> = head
            .iter()
            .map(|&key| key as u32)
            .filter(|&s| accepted(s))
            .take(MAX_LEXICAL_CANDIDATES)
            .collect();
        if whole || kept.len() == MAX_LEXICAL_CANDIDATES {
            return kept;
        }
        window = window.saturating_mul(4);
    }
}

/// Each slot of `touched` as one integer whose ascending order is the
/// slots' order best first: score descending (`f32::total_cmp`), then slot
/// ascending. Selecting and sorting plain integers instead of slots compared
/// through their scores (a load from the accumulators per comparison) was
/// most of choosing the best matches; the order, a total one, is the same.
fn by_score(touched: &[u32], acc: &[f32]) -> Vec<u64> {
    touched
        .iter()
        .map(|&slot| {
            let bits = acc[slot as usize].to_bits() as i32;
            // `total_cmp`'s key: flips the magnitude bits of negatives.
            let ordered = bits ^ (((bits >> 31) as u32) >> 1) as i32;
            // Descending: the largest score gets the smallest key.
            let descending = !((ordered as u32) ^ 0x8000_0000);
            (u64::from(descending) << 32) | u64::from(slot)
        })
        .collect()
}

/// Of phrase-matching slots, those not enclosing another match of the same
/// file (the enclosing chunk's bytes contain its nested chunks').
fn innermost(index: &crate::index::Index, hits: Vec<u32>) -> FastSet<u32> {
    let span = |s: u32| index.chunk(s).map(|(f, c)| (f, c.start_line, c.end_line));
    hits.iter()
        .copied()
        .filter(|&outer| {
            let Some((f, a, b)) = span(outer) else {
                return false;
            };
            !hits.iter().any(|&inner| {
                inner != outer
                    && span(inner)
                        .is_some_and(|(g, c, d)| g == f && a <= c && d <= b && (a, b) != (c, d))
            })
        })
        .collect()
}

/// Slots anchored in the exact G4 sense: `uri` equal to an anchor (every
/// chunk of an anchored file), or a relation whose `target_uri` equals one
/// (the definition named by a symbol URI, its callers, a file's importers).
pub fn anchored_slots(graph: &Graph<'_>, anchors: &[String]) -> HashSet<u32> {
    let index = graph.index;
    let mut out = HashSet::new();
    for anchor in anchors.iter().take(64) {
        let Some(target) = parse_anchor(graph.root, anchor) else {
            continue;
        };
        let mut one_hop: Vec<u32> = Vec::new();
        match &target.local_id {
            None => {
                out.extend(index.file_slots(&target.rel_path));
                one_hop.extend(index.importers_of(&target.rel_path).take(256));
            }
            Some(local) => {
                if let Some((slot, c)) = index.find(&target.rel_path, local) {
                    one_hop.push(slot);
                    if let Some(s) = &c.symbol {
                        one_hop.extend(index.mentions_of(&s.name).take(256));
                    }
                }
            }
        }
        // Claim 1-hop anchoring only when the relation really carries the
        // anchor (or its normalised file/symbol URI) as target.
        let normalised = match &target.local_id {
            None => graph.file_uri(&target.rel_path),
            Some(l) => crate::uri::symbol_uri(&graph.file_uri(&target.rel_path), l),
        };
        for slot in one_hop {
            if graph
                .relations(slot)
                .iter()
                .any(|r| r.target_uri == *anchor || r.target_uri == normalised)
            {
                out.insert(slot);
            }
        }
    }
    out
}

/// Approximate personalised PageRank from `seeds` by local push
/// (Andersen–Chung–Lang): touches only the neighbourhood that matters and is
/// bounded by [`PPR_MAX_PUSHES`], so a query stays fast on any index size.
fn personalised_pagerank(graph: &Graph<'_>, seeds: &HashSet<u32>) -> HashMap<u32, f32> {
    let mut p: HashMap<u32, f32> = HashMap::new();
    let mut r: HashMap<u32, f32> = HashMap::new();
    let mut queue: VecDeque<u32> = VecDeque::new();
    let mut seed_list: Vec<u32> = seeds.iter().copied().collect();
    seed_list.sort_unstable();
    seed_list.truncate(512);
    let share = 1.0 / seed_list.len().max(1) as f32;
    for &s in &seed_list {
        r.insert(s, share);
        queue.push_back(s);
    }
    let mut neighbours = Vec::new();
    let mut pushes = 0;
    while let Some(u) = queue.pop_front() {
        if pushes >= PPR_MAX_PUSHES {
            break;
        }
        let ru = r.get(&u).copied().unwrap_or(0.0);
        graph.neighbours(u, &mut neighbours);
        let deg = neighbours.len().max(1) as f32;
        if ru < PPR_EPSILON * deg {
            continue;
        }
        pushes += 1;
        *p.entry(u).or_insert(0.0) += PPR_ALPHA * ru;
        r.insert(u, 0.0);
        if neighbours.is_empty() {
            continue;
        }
        let spread = (1.0 - PPR_ALPHA) * ru / deg;
        for &v in &neighbours {
            let rv = r.entry(v).or_insert(0.0);
            let before = *rv;
            *rv += spread;
            if before < PPR_EPSILON && *rv >= PPR_EPSILON {
                queue.push_back(v);
            }
        }
    }
    p
}

#[path = "rank_base.rs"]
mod base;

#[cfg(test)]
#[path = "rank_accumulator_tests.rs"]
mod accumulator_tests;
