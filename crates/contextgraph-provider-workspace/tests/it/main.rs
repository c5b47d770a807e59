//! The workspace provider's integration tests, one module per behaviour,
//! linked into one test binary (one link on CI instead of thirteen). The
//! fixture repository and query helpers are in [`common`].

mod common;

mod anchored_ranking;
mod as_of;
mod budget_packing;
mod chunking_languages;
mod corrupt_index;
mod decoded_budget;
mod incremental_index;
mod kinds_filter;
mod oversized_chunks;
mod phrase_match;
mod prompt_overhead;
mod prose_goals;
mod provenance_digests;
mod ranking_signals;
mod retrieval_bench;
mod stdio_binary;
mod verify;
mod walk_gates;
mod watched_answers;
