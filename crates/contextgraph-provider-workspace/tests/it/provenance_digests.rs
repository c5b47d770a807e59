//! Frames (F5, D1, F3, G1/G2): `file://` provenance with `L<a>-<b>` ranges
//! whose sha256, re-read from disk, matches; content is exactly those bytes;
//! citation labels and relation names a person reads.

use crate::common::{ask, q, reread_digest, Fixture};
use contextgraph_provider_sdk::sha256_digest;
use contextgraph_types::{ContentFidelity, FrameKind};

#[test]
fn f5_every_frame_digest_matches_the_bytes_re_read_from_disk() {
    let f = Fixture::new();
    let p = f.open();
    for text in [
        "retry connection",
        "inventory restock",
        "invoice tax",
        "nightly backup",
        "ring buffer",
        "shoelace",
        "release checklist",
        "cart badge",
        "email",
    ] {
        let r = ask(&p, &q(text));
        assert!(!r.frames.is_empty(), "{text}");
        for fr in &r.frames {
            let prov = fr.file_provenance().next().expect("file provenance");
            assert_eq!(
                prov.digest,
                reread_digest(fr),
                "{}: provenance digest differs from the bytes on disk",
                fr.id
            );
            assert_eq!(fr.uri, prov.uri, "frame uri is its file");
            // Full frames carry exactly the addressed bytes.
            assert_eq!(
                fr.content.as_deref().map(|c| sha256_digest(c.as_bytes())),
                prov.digest
            );
            assert_eq!(fr.content_digest, prov.digest, "D1");
            assert_eq!(fr.content_fidelity, Some(ContentFidelity::Exact));
        }
    }
}

#[test]
fn frames_carry_readable_titles_labels_and_relations() {
    let f = Fixture::new();
    let p = f.open();
    let r = ask(&p, &q("retry_loop"));
    let fr = crate::common::find(&r, "src/net.rs#net::retry_loop").expect("retry_loop frame");
    assert_eq!(fr.kind, FrameKind::Symbol);
    assert_eq!(fr.title, "function net::retry_loop (src/net.rs)");
    assert_eq!(
        fr.citation_label.as_deref(),
        Some("src/net.rs:L5-18 retry_loop")
    );
    let prov = fr.file_provenance().next().expect("provenance");
    assert_eq!(prov.range.as_deref(), Some("L5-18"));
    assert_eq!(prov.method.as_deref(), Some("tree-sitter"));
    let net = f.file_uri("src/net.rs");
    let has = |rel: &str, target: &str, display: &str| {
        fr.relations.iter().any(|x| {
            x.rel == rel && x.target_uri == target && x.display_name.as_deref() == Some(display)
        })
    };
    assert!(
        has(
            "code.defines",
            &format!("{net}#net::retry_loop"),
            "net::retry_loop"
        ),
        "{:#?}",
        fr.relations
    );
    assert!(
        has(
            "code.calls",
            &format!("{net}#net::connect_once"),
            "net::connect_once"
        ),
        "{:#?}",
        fr.relations
    );
    assert!(
        has(
            "code.references",
            &format!("{net}#net::NetError"),
            "net::NetError"
        ),
        "{:#?}",
        fr.relations
    );
    // Imports: resolved to a workspace file, or a documented module URI.
    let lib = ask(&p, &q("pub mod config net"));
    let imports: Vec<_> = lib
        .frames
        .iter()
        .flat_map(|x| &x.relations)
        .filter(|x| x.rel == "code.imports")
        .collect();
    assert!(
        imports
            .iter()
            .any(|x| x.target_uri == f.file_uri("src/net.rs")),
        "{imports:#?}"
    );
    let py = ask(&p, &q("import os slugify"));
    let py_imports: Vec<_> = py
        .frames
        .iter()
        .flat_map(|x| &x.relations)
        .filter(|x| x.rel == "code.imports")
        .collect();
    assert!(
        py_imports
            .iter()
            .any(|x| x.target_uri == "cgp-module:python:os"),
        "{py_imports:#?}"
    );
    assert!(
        py_imports
            .iter()
            .any(|x| x.target_uri == f.file_uri("util/helpers.py")),
        "{py_imports:#?}"
    );
}

#[test]
fn content_served_is_what_is_on_disk_now() {
    let f = Fixture::new();
    let p = f.open();
    // Edited behind the index's back: the stale candidate is not served with
    // a digest for bytes that no longer exist.
    f.write(
        "src/config.rs",
        &crate::common::CONFIG_RS.replace("30_000", "45_000"),
    );
    let r = ask(&p, &q("parse_timeout"));
    for fr in &r.frames {
        assert_eq!(
            fr.file_provenance().next().and_then(|x| x.digest.clone()),
            reread_digest(fr),
            "{}",
            fr.id
        );
    }
    p.refresh().expect("refresh");
    let r = ask(&p, &q("parse_timeout"));
    let fr =
        crate::common::find(&r, "src/config.rs#config::parse_timeout").expect("re-indexed frame");
    assert!(fr.content.as_deref().unwrap_or("").contains("45_000"));
}
