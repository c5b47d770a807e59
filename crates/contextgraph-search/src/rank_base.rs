//! A candidate's score before the semantic matches: the lexical, name,
//! proximity and path signals, mixed and clamped, and whether it is test
//! code (the older demotion, without the role step).
//!
//! Why apart: none of it depends on the semantic matches, so the ranking
//! scores the candidates it already has while the semantic pass still
//! reads rows on the other thread, and only the matches' own candidates
//! after (`search_awaiting`). [`Base::with`] then adds what the matches
//! and a phrase hit give, in the order the score was always summed in, so
//! a score is the same float whichever side of the wait it was made on.

use std::collections::HashMap;

use foldhash::HashMap as FastMap;

use super::{TEST_CODE_FACTOR, W_FILE_NAME, W_LEXICAL, W_NAME, W_PATH, W_PHRASE, W_PROXIMITY};
use crate::index::Index;
use crate::query_terms::{is_test_code, ConceptMatcher};
use crate::rerank::RerankSignals;

/// One candidate's score before the semantic matches.
#[derive(Debug, Clone, Copy)]
pub(super) struct Base {
    /// The signals mixed and clamped to [0, 1].
    raw: f32,
    /// Test code, to be demoted (only without the role step).
    test_code: bool,
}

impl Base {
    /// The candidate's score: `semantic` (its weighted semantic score)
    /// added, then a phrase hit's lift, then the test-code demotion unless
    /// the goal asks for tests.
    pub(super) fn with(self, semantic: f32, phrase: bool, wants_tests: bool) -> f32 {
        let mut raw = self.raw;
        raw += semantic;
        if phrase {
            raw += W_PHRASE * (1.0 - raw);
        }
        if self.test_code && !wants_tests {
            raw *= TEST_CODE_FACTOR;
        }
        raw
    }
}

/// What a [`BaseScorer`] reads, all of it fixed for one goal.
#[derive(Clone, Copy)]
pub(super) struct BaseInputs<'a> {
    pub(super) index: &'a Index,
    pub(super) matcher: &'a ConceptMatcher<'a>,
    /// The goal, trimmed and lowercased (an exact name scores 1).
    pub(super) whole_query: &'a str,
    /// The lexical candidates' BM25 scores, and their maximum.
    pub(super) lexical: &'a FastMap<u32, f32>,
    pub(super) max_lex: f32,
    pub(super) proximity: &'a HashMap<u32, f32>,
    pub(super) signals: RerankSignals,
}

/// Scores candidates' [`Base`]s for one goal.
pub(super) struct BaseScorer<'a> {
    inputs: BaseInputs<'a>,
    /// The largest proximity among all candidates (0 until set: without
    /// anchors there is none).
    max_prox: f32,
    /// Path shares per file (NaN: not computed yet); a file's chunks are
    /// often many of the candidates.
    path_shares: Vec<f32>,
}

impl<'a> BaseScorer<'a> {
    pub(super) fn new(inputs: BaseInputs<'a>) -> BaseScorer<'a> {
        BaseScorer {
            inputs,
            max_prox: 0.0,
            path_shares: vec![f32::NAN; inputs.index.file_capacity()],
        }
    }

    /// Set the largest proximity among the candidates: bases scored before
    /// are only right if it was 0 then and is now (no anchors).
    pub(super) fn set_max_proximity(&mut self, max_prox: f32) {
        self.max_prox = max_prox;
    }

    /// The base of the candidate in `slot`.
    pub(super) fn of(&mut self, slot: u32) -> Base {
        let inputs = self.inputs;
        let (index, matcher, signals) = (inputs.index, inputs.matcher, inputs.signals);
        let chunk = index.chunk(slot);
        let lex = if inputs.max_lex > 0.0 && !signals.model_alone {
            inputs.lexical.get(&slot).copied().unwrap_or(0.0) / inputs.max_lex
        } else {
            0.0
        };
        let prox = if self.max_prox > 0.0 {
            inputs.proximity.get(&slot).copied().unwrap_or(0.0) / self.max_prox
        } else {
            0.0
        };
        let name = chunk.map_or(0.0, |(_, c)| {
            c.symbol.as_ref().map_or(0.0, |s| {
                name_score(matcher, inputs.whole_query, s, &c.symbol_tokens)
            })
        });
        let path = match (chunk, index.file_number(slot)) {
            (Some((file, _)), Some(number)) => {
                let cell = &mut self.path_shares[number as usize];
                if cell.is_nan() {
                    *cell = matcher.path_share(file);
                    if signals.file_name {
                        let name = file.rsplit('/').next().unwrap_or(file);
                        *cell += W_FILE_NAME * matcher.path_share(name);
                    }
                }
                *cell
            }
            _ => 0.0,
        };
        let raw =
            (W_LEXICAL * lex + W_NAME * name + W_PROXIMITY * prox + W_PATH * path).clamp(0.0, 1.0);
        // Without the role step, the older test-code demotion.
        let test_code = !signals.roles
            && chunk.is_some_and(|(file, c)| {
                is_test_code(file, c.symbol.as_ref().map(|s| s.qualified.as_str()))
            });
        Base { raw, test_code }
    }
}

/// How well a symbol's name matches the query: 1 for the exact name, else
/// the share of the goal's words (any inflection) that are parts of the
/// name (read from the chunk's stored tokens of it, `tokens`).
fn name_score(
    matcher: &ConceptMatcher<'_>,
    whole_query: &str,
    symbol: &crate::chunk::SymbolInfo,
    tokens: &str,
) -> f32 {
    if equals_lowercased(&symbol.name, whole_query)
        || equals_lowercased(&symbol.qualified, whole_query)
    {
        return 1.0;
    }
    0.8 * matcher.stored_token_share(tokens)
}

/// Whether `text` lowercased is `lower`, without building the lowercase copy
/// (asked for every candidate chunk).
fn equals_lowercased(text: &str, lower: &str) -> bool {
    if text.is_ascii() {
        return text.len() == lower.len()
            && text
                .bytes()
                .map(|b| b.to_ascii_lowercase())
                .eq(lower.bytes());
    }
    text.chars().flat_map(char::to_lowercase).eq(lower.chars())
}
