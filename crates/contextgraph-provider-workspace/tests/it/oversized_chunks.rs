//! Chunks that always fit: the best-matching function inside a huge
//! `macro_rules!` or `cfg_if!` block is served as a frame of its own under a
//! default budget, with provenance of exactly the bytes served.

use crate::common::{ask, reread_digest, Fixture};
use contextgraph_provider_sdk::sha256_digest;
use contextgraph_types::ContextQuery;

/// The workspace provider's share of `cgp context`'s default budget
/// (8,000 model tokens / 1.35 ≈ 5,900 budget tokens) when one other
/// provider shares it equally.
const DEFAULT_SHARE: u32 = 2_950;

fn function(name: &str, indent: &str, body: &str) -> String {
    let mut f = format!("{indent}/// Computes {name}.\n{indent}pub fn {name}(x: u64) -> u64 {{\n");
    for i in 0..14 {
        f.push_str(&format!(
            "{indent}    let v{i} = x.rotate_left({i}) ^ 0x9e37_79b9;\n"
        ));
    }
    f.push_str(&format!("{indent}    {body}\n{indent}}}\n\n"));
    f
}

/// A macro body of ~60 functions (≈ 45 kB): as one chunk it would cost
/// ≈ 11,000 budget tokens, far above the share.
fn macro_rules_file() -> String {
    let mut s = String::from("macro_rules! impl_codecs {\n    ($t:ty) => {\n");
    for i in 0..60 {
        s.push_str(&function(&format!("encode_variant_{i}"), "        ", "x"));
    }
    s.push_str(&function(
        "reconcile_ledger_checksum",
        "        ",
        "ledger_checksum_reconciled(x)",
    ));
    s.push_str("    };\n}\n");
    s
}

fn cfg_if_file() -> String {
    let mut s = String::from("cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        impl Poller {\n");
    for i in 0..60 {
        s.push_str(&function(&format!("poll_source_{i}"), "            ", "x"));
    }
    s.push_str(&function(
        "drain_epoll_backlog",
        "            ",
        "epoll_backlog_drained(x)",
    ));
    s.push_str("        }\n    }\n}\n");
    s
}

fn assert_served(rel: &str, text: &str, goal: &str, want_id: &str, want_fn: &str) {
    let f = Fixture::empty();
    f.write(rel, text);
    let p = f.open();
    assert!(
        text.len() / 4 > DEFAULT_SHARE as usize * 3,
        "the block alone is far over the share"
    );
    let r = ask(&p, &ContextQuery::new(goal, 8, DEFAULT_SHARE));
    let top = r.frames.first().expect("a frame is served");
    assert_eq!(top.id, want_id, "{:?}", crate::common::ids(&r));
    let content = top.content.as_deref().expect("content");
    assert!(content.contains(&format!("pub fn {want_fn}(")), "{content}");
    assert!(content.len() <= contextgraph_search::chunk::fit::MAX_CHUNK_BYTES);
    // Honest provenance: the digest is of exactly the bytes served, re-read from disk.
    let prov = top.file_provenance().next().expect("file provenance");
    assert_eq!(prov.digest, Some(sha256_digest(content.as_bytes())));
    assert_eq!(reread_digest(top), prov.digest);
    assert!(r.total_token_cost() <= u64::from(DEFAULT_SHARE));
}

#[test]
fn best_inner_function_of_a_huge_macro_rules_block_is_served() {
    assert_served(
        "src/codecs.rs",
        &macro_rules_file(),
        "reconcile ledger checksum",
        "src/codecs.rs#codecs::impl_codecs::reconcile_ledger_checksum",
        "reconcile_ledger_checksum",
    );
}

#[test]
fn best_inner_function_of_a_huge_cfg_if_block_is_served() {
    assert_served(
        "src/poller.rs",
        &cfg_if_file(),
        "drain epoll backlog",
        "src/poller.rs#poller::cfg_if!::Poller::drain_epoll_backlog",
        "drain_epoll_backlog",
    );
}
