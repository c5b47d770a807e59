use super::*;
use crate::chunk::{ChunkKind, ImportRef};
use crate::codec::{Reader, Writer};
use crate::lang::Language;
use contextgraph_types::Timestamp;

fn record(path: &str, chunks: &[&[(&str, u32)]]) -> FileRecord {
    FileRecord {
        rel_path: path.into(),
        content_hash: [1; 32],
        size: 1,
        mtime_ns: Some(7),
        language: Language::detect(path),
        skipped: None,
        chunks: chunks
            .iter()
            .enumerate()
            .map(|(i, terms)| ChunkRecord {
                kind: ChunkKind::Snippet,
                local_id: format!("L{i}"),
                title: format!("t{i}"),
                symbol: None,
                start_line: 1 + i as u32,
                end_line: 1 + i as u32,
                byte_len: 1,
                digest: [2; 32],
                method: "window".into(),
                outline: None,
                recorded_at: Timestamp::from_unix(1, 0),
                valid_from: Timestamp::from_unix(1, 0),
                terms: terms.iter().copied().collect(),
                doc_len: terms.iter().map(|x| x.1).sum(),
                calls: vec!["callee".into()],
                references: Vec::new(),
                documents: Vec::new(),
                imports: Vec::new(),
            })
            .collect(),
    }
}

fn roundtrip(index: &Index) -> Index {
    let mut w = Writer::default();
    index.encode(&mut w);
    let mut r = Reader::new(&w.buf);
    let out = Index::decode(&mut r).expect("decodes");
    assert!(r.is_empty());
    out
}

fn sorted(mut v: Vec<FileRecord>) -> Vec<FileRecord> {
    v.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    v
}

#[test]
fn v3_payload_round_trips_records_terms_and_statistics() {
    let a = record("a.rs", &[&[("alpha", 2), ("beta", 1)], &[("beta", 3)]]);
    let b = record("b.rs", &[&[("alpha", 1), ("gamma", 1)]]);
    let index = Index::from_records([a.clone(), b.clone()]);
    let back = roundtrip(&index);
    assert_eq!(sorted(back.records_with_terms()), sorted(vec![a, b]));
    assert_eq!(
        (back.df("alpha"), back.df("beta"), back.df("nope")),
        (2, 2, 0)
    );
    assert_eq!(back.avg_len(), index.avg_len());
    assert_eq!(back.mentions_of("callee").count(), 3);
    let mut p: Vec<_> = back.postings("beta").collect();
    p.sort_unstable();
    assert_eq!(p.iter().map(|x| x.1).collect::<Vec<_>>(), [1, 3]);
}

#[test]
fn edits_after_a_load_touch_only_that_files_postings_and_compact_to_a_fresh_build() {
    let a = record("a.rs", &[&[("alpha", 2), ("beta", 1)]]);
    let b = record("b.rs", &[&[("beta", 1)]]);
    let mut loaded = roundtrip(&Index::from_records([a.clone(), b.clone()]));
    // New version of a.rs: one term gone, one new (lands in the dictionary tail).
    let a2 = record("a.rs", &[&[("beta", 4), ("delta", 1)]]);
    loaded.upsert(a2.clone());
    assert_eq!(
        (loaded.df("alpha"), loaded.df("beta"), loaded.df("delta")),
        (0, 2, 1)
    );
    assert_eq!(loaded.postings("alpha").count(), 0, "dead slot skipped");
    assert_eq!(loaded.chunk_count(), 2);
    let fresh = Index::from_records([b.clone(), a2.clone()]);
    let mut compacted = loaded.clone();
    compacted.compact();
    assert_eq!(compacted.slot_capacity(), 2, "dead slots swept");
    for ix in [&loaded, &compacted] {
        assert_eq!(
            sorted(ix.records_with_terms()),
            sorted(fresh.records_with_terms())
        );
        assert_eq!(ix.avg_len(), fresh.avg_len());
        for t in ["alpha", "beta", "delta"] {
            assert_eq!(ix.df(t), fresh.df(t), "{t}");
        }
    }
    loaded.remove("b.rs");
    assert_eq!((loaded.df("beta"), loaded.file_count()), (1, 1));
}

#[test]
fn lazily_derived_parts_are_exact_whether_built_before_or_after_edits() {
    let mut a = record("a.rs", &[&[("alpha", 2), ("beta", 1)]]);
    a.chunks[0].imports = vec![ImportRef {
        module: "crate::b".into(),
        candidates: vec!["b.rs".into()],
    }];
    let b = record("b.rs", &[&[("beta", 1)], &[("gamma", 3)]]);
    let a2 = record("a.rs", &[&[("delta", 1)]]);
    let fresh = Index::from_records([b.clone(), a2.clone()]);
    let loaded = roundtrip(&Index::from_records([a.clone(), b.clone()]));
    assert_eq!(
        loaded.importers_of("b.rs").count(),
        1,
        "edges built on demand"
    );
    // Edit once with the lazy parts already built, once with them still unbuilt.
    let mut warm = loaded.clone();
    warm.warm_up();
    let mut cold = roundtrip(&Index::from_records([a, b]));
    for ix in [&mut warm, &mut cold] {
        ix.upsert(a2.clone());
        assert_eq!(ix.importers_of("b.rs").count(), 0, "the importer is gone");
        assert_eq!(ix.mentions_of("callee").count(), 3);
        for t in ["alpha", "beta", "gamma", "delta"] {
            assert_eq!(ix.df(t), fresh.df(t), "{t}");
        }
        assert_eq!(
            sorted(ix.records_with_terms()),
            sorted(fresh.records_with_terms())
        );
        ix.remove("b.rs");
        assert_eq!((ix.df("beta"), ix.df("gamma"), ix.df("delta")), (0, 0, 1));
    }
}

/// The payload split after its records section (`u64` length + records).
fn split(index: &Index) -> (Vec<u8>, Vec<u8>) {
    let mut w = Writer::default();
    index.encode(&mut w);
    let len = u64::from_le_bytes(w.buf[..8].try_into().expect("8 bytes")) as usize;
    let terms = w.buf.split_off(8 + len);
    (w.buf, terms)
}

#[test]
fn a_posting_naming_a_slot_no_record_has_is_refused() {
    // Each section is well-formed alone; together the postings name
    // slot 1 of an index with a single chunk.
    let (one_chunk, _) = split(&Index::from_records([record("a.rs", &[&[("alpha", 1)]])]));
    let (_, two_chunks) = split(&Index::from_records([record(
        "a.rs",
        &[&[("alpha", 1)], &[("alpha", 1)]],
    )]));
    let mut bad = one_chunk.clone();
    bad.extend_from_slice(&two_chunks);
    assert!(Index::decode(&mut Reader::new(&bad)).is_none());
    let (_, one_terms) = split(&Index::from_records([record("a.rs", &[&[("alpha", 1)]])]));
    let mut good = one_chunk;
    good.extend_from_slice(&one_terms);
    assert!(Index::decode(&mut Reader::new(&good)).is_some());
}

#[test]
fn corrupt_v3_payloads_are_refused_not_trusted() {
    let index = Index::from_records([record("a.rs", &[&[("alpha", 2), ("beta", 1)]])]);
    let mut w = Writer::default();
    index.encode(&mut w);
    let good = w.buf;
    for cut in 0..good.len() {
        let mut r = Reader::new(&good[..cut]);
        assert!(
            Index::decode(&mut r).is_none_or(|_| !r.is_empty()),
            "a payload cut at {cut} bytes must not decode whole"
        );
    }
    // Unsorted dictionary: swap the two terms' first letters.
    let mut bad = good.clone();
    let at = bad.windows(5).position(|x| x == b"alpha").expect("alpha");
    let bt = bad.windows(4).position(|x| x == b"beta").expect("beta");
    bad[at] = b'c';
    bad[bt] = b'a';
    assert!(Index::decode(&mut Reader::new(&bad)).is_none());
}

/// A chunk's terms are counted piece by piece (lines, qualified name,
/// title) without building its own text: they must be the terms of that
/// text, for containers whose members' lines are left out too.
#[test]
fn chunk_terms_are_the_terms_of_the_chunks_own_text() {
    let text = "/// Docs.\nimpl RetryLoop {\n    fn httpServer(&self) -> u32 {\n        2\n    }\n\n    fn other() {}\n}\nfn tail_end() {}";
    let chunks = crate::chunk::chunk_file("src/net.rs", Language::Rust, text);
    assert!(chunks.iter().any(|c| !c.nested.is_empty()), "{chunks:?}");
    let lines = crate::chunk::LineIndex::new(text);
    let expected: Vec<_> = chunks
        .iter()
        .map(|c| crate::tokenize::term_frequencies(&records::own_text(text, &lines, c)))
        .collect();
    let built = build_chunk_records(text, chunks, None, Timestamp::from_unix(1, 0), None);
    assert_eq!(built.len(), expected.len());
    for (r, (terms, len)) in built.iter().zip(expected) {
        assert_eq!(r.terms, terms, "{}", r.local_id);
        assert_eq!(r.doc_len, len);
    }
}
