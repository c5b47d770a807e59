use super::*;
use crate::chunk::{ChunkKind, ImportRef};
use crate::lang::Language;
use contextgraph_types::Timestamp;
use std::sync::Arc;

/// A file of one chunk per entry of `chunks`, each holding its terms (and
/// a call to `callee`); shared with the ranking's tests.
pub(crate) fn record(path: &str, chunks: &[&[(&str, u32)]]) -> FileRecord {
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
                symbol_tokens: String::new(),
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

fn open(bytes: Vec<u8>) -> Option<Index> {
    Index::open(Arc::new(Backing::Owned(bytes)), 0)
}

fn roundtrip(index: &Index) -> Index {
    open(index.encode_to_vec()).expect("opens")
}

fn sorted(mut v: Vec<FileRecord>) -> Vec<FileRecord> {
    v.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    v
}

#[test]
fn v5_payload_round_trips_records_terms_and_statistics() {
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
    assert_eq!(back.mentions_of("nobody").count(), 0);
    let mut p: Vec<_> = back.postings("beta").collect();
    p.sort_unstable();
    assert_eq!(p.iter().map(|x| x.1).collect::<Vec<_>>(), [1, 3]);
}

/// Records are written out in pieces of [`snapshot::RECORDS_FLUSH`] bytes;
/// every chunk's offset must still point at its record after several
/// pieces, and each file's checksum must cover its own bytes.
#[test]
fn records_spanning_several_flushes_round_trip() {
    let outline = "x".repeat(4096);
    let records: Vec<FileRecord> = (0..40)
        .map(|f| {
            let terms: &[(&str, u32)] = &[("alpha", 1)];
            let mut r = record(&format!("f{f}.rs"), &[terms; 20]);
            for (i, c) in r.chunks.iter_mut().enumerate() {
                c.outline = Some(format!("{f}:{i}:{outline}"));
            }
            r
        })
        .collect();
    let index = Index::from_records(records.clone());
    let bytes = index.encode_to_vec();
    assert!(
        bytes.len() > 3 * snapshot::RECORDS_FLUSH,
        "the test needs several flushes"
    );
    let back = open(bytes).expect("opens");
    assert!(back.is_intact());
    assert_eq!(sorted(back.records_with_terms()), sorted(records));
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
fn edits_read_the_same_whether_the_files_chunks_were_decoded_before_or_not() {
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
        "edges read from the snapshot"
    );
    // Edit once with every file's chunks decoded, once with none decoded.
    let mut decoded = loaded.clone();
    assert_eq!(decoded.records().count(), 2);
    let mut in_place = roundtrip(&Index::from_records([a, b]));
    for ix in [&mut decoded, &mut in_place] {
        ix.upsert(a2.clone());
        assert_eq!(ix.importers_of("b.rs").count(), 0, "the importer is gone");
        assert_eq!(ix.mentions_of("callee").count(), 3);
        for t in ["alpha", "beta", "gamma", "delta"] {
            assert_eq!(ix.df(t), fresh.df(t), "{t}");
        }
        // A snapshot of the edited index (saved parts copied, changes
        // folded in) is the fresh build's.
        let again = roundtrip(ix);
        assert_eq!(again.encode_to_vec(), fresh.encode_to_vec());
        assert_eq!(
            sorted(ix.records_with_terms()),
            sorted(fresh.records_with_terms())
        );
        ix.remove("b.rs");
        assert_eq!((ix.df("beta"), ix.df("gamma"), ix.df("delta")), (0, 0, 1));
    }
}

#[test]
fn opening_decodes_only_the_file_table_and_chunks_on_first_use() {
    let index = roundtrip(&Index::from_records([
        record("a.rs", &[&[("alpha", 1)]]),
        record("b.rs", &[&[("beta", 1)]]),
    ]));
    let decoded = |ix: &Index| {
        ix.files
            .iter()
            .flatten()
            .filter(|e| e.record.get().is_some())
            .count()
    };
    assert_eq!(decoded(&index), 0);
    assert_eq!(index.file_head("a.rs").map(|h| h.chunks.len()), Some(0));
    assert_eq!(index.postings("alpha").count(), 1);
    assert_eq!(decoded(&index), 0, "a posting lookup decodes no record");
    let slot = index.postings("beta").next().map(|p| p.0).expect("a slot");
    assert_eq!(
        index.chunk(slot).map(|(p, c)| (p, c.title.as_str())),
        Some(("b.rs", "t0"))
    );
    assert_eq!(decoded(&index), 0, "a chunk is decoded alone, not its file");
    assert_eq!(index.file("a.rs").map(|r| r.chunks.len()), Some(1));
    assert_eq!(decoded(&index), 1);
    // Saved again, an untouched file's chunks are copied and still found.
    let again = roundtrip(&index);
    assert_eq!(again.chunk(slot).map(|(p, _)| p), Some("b.rs"));
    assert_eq!(again.encode_to_vec(), index.encode_to_vec());
}

/// The payload's sections, cut along its directory.
fn sections(payload: &[u8]) -> Vec<Vec<u8>> {
    (0..frozen::SECTIONS)
        .map(|i| {
            let at = |k: usize| {
                let b = &payload[i * 20 + k..i * 20 + k + 8];
                u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize
            };
            payload[at(0)..at(0) + at(8)].to_vec()
        })
        .collect()
}

/// A payload of `sections` with a directory and checksums that match them.
fn assemble(sections: &[Vec<u8>]) -> Vec<u8> {
    let mut dir = Vec::new();
    let mut offset = frozen::DIRECTORY_BYTES as u64;
    for s in sections {
        dir.extend_from_slice(&offset.to_le_bytes());
        dir.extend_from_slice(&(s.len() as u64).to_le_bytes());
        dir.extend_from_slice(&frozen::crc32(s).to_le_bytes());
        offset += s.len() as u64;
    }
    let own = frozen::crc32(&dir);
    dir.extend_from_slice(&own.to_le_bytes());
    for s in sections {
        dir.extend_from_slice(s);
    }
    dir
}

#[test]
fn checksummed_but_inconsistent_sections_are_refused() {
    // Each section is well-formed and checksummed; together the slot
    // lengths describe two chunks where the file table has one.
    let one = sections(&Index::from_records([record("a.rs", &[&[("alpha", 1)]])]).encode_to_vec());
    let two = sections(
        &Index::from_records([record("a.rs", &[&[("alpha", 1)], &[("alpha", 1)]])]).encode_to_vec(),
    );
    assert!(open(assemble(&one)).is_some());
    let mut bad = one.clone();
    bad[frozen::DOC_LENS] = two[frozen::DOC_LENS].clone();
    assert!(open(assemble(&bad)).is_none());
    let mut bad = one.clone();
    bad[frozen::FORWARD] = two[frozen::FORWARD].clone();
    assert!(open(assemble(&bad)).is_none());
    // A table whose offsets run past its data.
    let mut bad = one;
    let last = bad[frozen::TERMS].len() - 1;
    bad[frozen::TERMS].truncate(last);
    assert!(open(assemble(&bad)).is_none());
}

#[test]
fn corrupt_or_truncated_v5_payloads_are_refused_not_trusted() {
    let index = Index::from_records([record("a.rs", &[&[("alpha", 2), ("beta", 1)]])]);
    let good = index.encode_to_vec();
    assert!(open(good.clone()).is_some());
    for cut in 0..good.len() {
        assert!(
            open(good[..cut].to_vec()).is_none(),
            "a payload cut at {cut} bytes must not open"
        );
    }
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        // Refused at the load, or (a byte of the chunk records, checked per
        // file on first use) refused when the file is read.
        if let Some(ix) = open(bad) {
            assert_eq!(ix.records().map(|r| r.chunks.len()).sum::<usize>(), 0);
            assert!(
                !ix.is_intact(),
                "a payload with byte {at} flipped must not be trusted"
            );
        }
    }
    let mut longer = good;
    longer.push(0);
    assert!(open(longer).is_none(), "trailing bytes");
}

#[test]
fn a_malformed_entry_reads_as_absent_never_as_a_panic() {
    // Past the checksums (as after a collision): garbage in the terms and
    // records sections, re-checksummed, must not panic whatever is asked.
    let index = Index::from_records([
        record("a.rs", &[&[("alpha", 2), ("beta", 1)]]),
        record("b.rs", &[&[("beta", 1)]]),
    ]);
    let good = sections(&index.encode_to_vec());
    for section in [
        frozen::TERMS,
        frozen::RECORDS,
        frozen::MENTIONS,
        frozen::FORWARD,
    ] {
        for at in 0..good[section].len() {
            let mut bad = good.clone();
            bad[section][at] = 0xff;
            let Some(mut ix) = open(assemble(&bad)) else {
                continue;
            };
            let _ = (ix.df("alpha"), ix.postings("beta").count());
            let _ = (
                ix.mentions_of("callee").count(),
                ix.chunk(0),
                ix.chunk_terms(1),
            );
            let _ = ix.records_with_terms();
            ix.upsert(record("a.rs", &[&[("delta", 1)]]));
            ix.compact();
        }
    }
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

/// The records' buffers reused from chunk to chunk (line pieces, sorted
/// nested spans) give every chunk the terms of its own text computed the
/// plain way, fresh for each chunk: after a chunk with many nested spans
/// given out of order, one without any, one with a symbol and one
/// without, and on a large file followed by a small one.
#[test]
fn reused_record_buffers_count_every_chunk_as_fresh_ones_do() {
    use crate::chunk::{Chunk, ChunkKind, LineIndex, SymbolInfo};
    /// The own text as the records built it before their buffers were
    /// reused: a sorted copy of the spans, the lines between them, then
    /// the qualified name and the title, each after a space.
    fn plain_own_text(text: &str, lines: &LineIndex, c: &Chunk) -> String {
        let mut nested = c.nested.clone();
        nested.sort_unstable();
        let mut out = String::new();
        let mut line = c.start_line;
        for (a, b) in nested {
            if a > line {
                out.push_str(lines.slice(text, line, a - 1).unwrap_or(""));
            }
            line = line.max(b + 1);
        }
        if line <= c.end_line {
            out.push_str(lines.slice(text, line, c.end_line).unwrap_or(""));
        }
        if let Some(s) = &c.symbol {
            out.push(' ');
            out.push_str(&s.qualified);
        }
        out.push(' ');
        out.push_str(&c.title);
        out
    }
    let chunk = |start: u32, end: u32, nested: Vec<(u32, u32)>, symbol: bool| {
        let mut c = Chunk::plain(
            ChunkKind::Symbol,
            format!("c{start}"),
            format!("Title{start} of Chunk"),
            start,
            end,
            "test",
        );
        c.nested = nested;
        c.symbol = symbol.then(|| SymbolInfo {
            name: format!("sym{start}"),
            qualified: format!("mod::Sym{start}::inner_{end}"),
            kind_label: "function".into(),
        });
        c
    };
    let big: String = (0..3000)
        .map(|i| format!("fn word{} alpha{} Beta{i} gamma\n", i % 17, i % 5))
        .collect();
    let small = "one two\nthree Four five\nsix\nseven eight nine\n";
    let files: Vec<(&str, Vec<Chunk>)> = vec![
        (
            big.as_str(),
            vec![
                chunk(
                    1,
                    3000,
                    vec![(900, 1200), (10, 20), (2500, 2999), (15, 30)],
                    true,
                ),
                chunk(10, 20, Vec::new(), false),
                chunk(2500, 2999, vec![(2600, 2601)], true),
                chunk(5, 5, Vec::new(), true),
            ],
        ),
        (
            small,
            vec![
                chunk(1, 4, vec![(2, 2)], false),
                chunk(2, 2, Vec::new(), true),
                chunk(3, 4, Vec::new(), false),
            ],
        ),
    ];
    for (text, chunks) in files {
        let lines = LineIndex::new(text);
        let expected: Vec<_> = chunks
            .iter()
            .map(|c| crate::tokenize::term_frequencies(&plain_own_text(text, &lines, c)))
            .collect();
        let built = build_chunk_records(text, chunks, None, Timestamp::from_unix(1, 0), None);
        assert_eq!(built.len(), expected.len());
        for (r, (terms, len)) in built.iter().zip(expected) {
            assert!(len > 0, "{}", r.local_id);
            assert_eq!(r.terms, terms, "{}", r.local_id);
            assert_eq!(r.doc_len, len, "{}", r.local_id);
        }
    }
}

/// Upserted chunks are held encoded (`packed.rs`), read back whole on
/// demand, and written to a snapshot as the very bytes a decoded record
/// encodes to.
#[test]
fn upserted_chunks_are_held_encoded_and_read_back_whole() {
    let a = record("a.rs", &[&[("alpha", 2), ("beta", 1)], &[("beta", 3)]]);
    let b = record("b.rs", &[&[("alpha", 1)]]);
    let index = Index::from_records([a.clone(), b.clone()]);
    assert!(
        index
            .files
            .iter()
            .flatten()
            .all(|e| e.record.get().is_none()),
        "no record is decoded until read"
    );
    let without_terms = |mut r: FileRecord| {
        for c in &mut r.chunks {
            c.terms = Default::default();
        }
        r
    };
    assert_eq!(index.file("a.rs"), Some(&without_terms(a)));
    assert_eq!(
        index.chunk(2).map(|(p, c)| (p, c.local_id.as_str())),
        Some(("b.rs", "L0"))
    );
    // A loaded index whose files are all decoded re-encodes each record;
    // the packed bytes must be exactly that encoding.
    let bytes = index.encode_to_vec();
    let loaded = open(bytes.clone()).expect("opens");
    assert_eq!(loaded.records().count(), 2);
    assert_eq!(loaded.encode_to_vec(), bytes);
}

/// Postings added since the load are held as varint pairs: they read back
/// exactly (gaps of every width, large frequencies), and a dense run costs
/// two bytes a pair, not the eight of a `(u32, u32)`.
#[test]
fn added_postings_read_back_exactly_and_compactly() {
    let mut p = postings::Posting::with_df(0);
    let pairs: Vec<(u32, u32)> = [
        (0, 1),
        (1, 300),
        (200, 2),
        (70_000, 1),
        (u32::MAX - 1, u32::MAX),
    ]
    .into_iter()
    .collect();
    for &(s, tf) in &pairs {
        p.push(s, tf);
    }
    let mut index = Index::default();
    index.tail_postings.push(p);
    index.dict.intern("t");
    assert_eq!(index.postings_of(0).collect::<Vec<_>>(), pairs);

    let mut dense = postings::Posting::with_df(0);
    for s in 0..1000 {
        dense.push(s, 1);
    }
    assert_eq!(dense.added_bytes(), 2000);
}

/// The snapshot encoded with its tables built on other threads is the
/// one-thread encoding, byte for byte: for a fresh index with a dead
/// file, and for a loaded one extended since (saved and new terms,
/// names and slots merged).
#[test]
fn parallel_encoding_is_the_one_thread_encoding() {
    let encode = |index: &Index, parallel: bool| {
        let mut out = Vec::new();
        let directory = index
            .encode(
                &mut |bytes: &[u8]| {
                    out.extend_from_slice(bytes);
                    Ok(())
                },
                parallel,
            )
            .expect("encodes");
        (directory, out)
    };
    let records: Vec<FileRecord> = (0..40)
        .map(|f| {
            let terms: Vec<(String, u32)> = (0..5)
                .map(|t| (format!("term{}", (f * 7 + t) % 23), t + 1))
                .collect();
            let chunk: Vec<(&str, u32)> = terms.iter().map(|(t, n)| (t.as_str(), *n)).collect();
            record(
                &format!("src/f{f:02}.rs"),
                &[&chunk, &chunk[1..], &[("shared", 1)]],
            )
        })
        .collect();
    let mut fresh = Index::from_records(records.iter().cloned());
    fresh.remove("src/f03.rs");
    let (one, bytes) = encode(&fresh, false);
    assert!(
        bytes.len() > 1000,
        "{} bytes: too small to say much",
        bytes.len()
    );
    assert_eq!((one.clone(), bytes.clone()), encode(&fresh, true));

    let mut loaded = roundtrip(&fresh);
    loaded.upsert(record("src/new.rs", &[&[("term3", 2), ("novel", 1)]]));
    loaded.upsert(records[5].clone());
    loaded.remove("src/f09.rs");
    let (one, bytes) = encode(&loaded, false);
    assert_eq!((one, bytes), encode(&loaded, true));
}

/// A file's cached traits are its role and test-path verdict, computed
/// from its path and language, for built, loaded and replaced files alike.
#[test]
fn file_traits_are_the_role_and_test_path_of_the_file() {
    use crate::file_role::file_role;
    use crate::query_terms::is_test_path;
    let paths = [
        "src/lib.rs",
        "tests/it.rs",
        "pkg/server_test.go",
        "README.md",
        "Cargo.lock",
        "examples/demo.rs",
    ];
    let records: Vec<FileRecord> = paths
        .iter()
        .map(|p| record(p, &[&[("alpha", 1)]]))
        .collect();
    let built = Index::from_records(records.clone());
    let loaded = roundtrip(&built);
    for index in [&built, &loaded] {
        for p in paths {
            let number = index
                .file_slots(p)
                .next()
                .and_then(|s| index.file_number(s))
                .expect("a live file");
            let want = (file_role(p, Language::detect(p)), is_test_path(p));
            assert_eq!(index.file_traits(number), Some(want), "{p}");
            // Asked again: the same (cached) answer.
            assert_eq!(index.file_traits(number), Some(want), "{p}");
        }
    }
    assert!(built.file_traits(u32::MAX).is_none());
}

/// Terms that share their first eight bytes (one sort key) are saved in
/// their bytes' order whatever order they were first seen in, so every
/// one of them is found after a load. Seen in descending order here: a
/// save that left a run of equal keys in id order would write the table
/// out of order, and the load's binary search would miss terms.
#[test]
fn terms_sharing_their_first_eight_bytes_are_saved_in_order() {
    let words: Vec<String> = ["zz", "y", "x", "c", "b\u{e9}", "b", "a", ""]
        .iter()
        .map(|tail| format!("serialize{tail}"))
        .chain(["serializ", "serial", "des"].map(str::to_owned))
        .collect();
    let chunks: Vec<Vec<(&str, u32)>> = words.iter().map(|w| vec![(w.as_str(), 1)]).collect();
    let chunk_refs: Vec<&[(&str, u32)]> = chunks.iter().map(Vec::as_slice).collect();
    let loaded = roundtrip(&Index::from_records([record("a.rs", &chunk_refs)]));
    for w in &words {
        assert_eq!(loaded.df(w), 1, "{w} is found after a load");
    }
    assert_eq!(loaded.df("serializ\u{e9}"), 0);
}

/// Forgetting the decoded records frees them and changes nothing else:
/// the same chunks are read back, the snapshot encodes to the same bytes,
/// for files loaded from a snapshot and files upserted since (packed).
#[test]
fn forgotten_decoded_records_read_back_the_same_and_encode_the_same() {
    let a = record("a.rs", &[&[("alpha", 2)], &[("beta", 1)], &[("gamma", 1)]]);
    let b = record("b.rs", &[&[("delta", 1)], &[("alpha", 1)]]);
    let mut index = roundtrip(&Index::from_records([a]));
    index.upsert(b);
    let before: Vec<(String, ChunkRecord)> = (0..index.slot_capacity() as u32)
        .filter_map(|s| index.chunk(s).map(|(p, c)| (p.to_owned(), c.clone())))
        .collect();
    assert_eq!(before.len(), 5);
    assert_eq!(index.decoded_records(), index.decoded_chunks());
    assert_eq!(
        index.decoded_records(),
        5,
        "three alone, two in b.rs's record"
    );
    let bytes = index.encode_to_vec();

    index.forget_decoded();
    assert_eq!((index.decoded_records(), index.decoded_chunks()), (0, 0));
    assert_eq!(
        index.encode_to_vec(),
        bytes,
        "nothing but the decoded copies went"
    );
    let after: Vec<(String, ChunkRecord)> = (0..index.slot_capacity() as u32)
        .filter_map(|s| index.chunk(s).map(|(p, c)| (p.to_owned(), c.clone())))
        .collect();
    assert_eq!(after, before);
    assert_eq!(index.decoded_records(), 5);
    assert_eq!(index.file("a.rs").map(|f| f.chunks.len()), Some(3));
    assert_eq!(
        index.decoded_records(),
        8,
        "a whole file decoded counts its chunks"
    );
}

/// The count of decoded records is what the index keeps: a removed or
/// replaced file's decoded record leaves with it, so a refresh that drops
/// many files does not make the count (and the server's budget) run ahead
/// of the memory held.
#[test]
fn removed_files_take_their_decoded_records_out_of_the_count() {
    let a = record("a.rs", &[&[("alpha", 2)], &[("beta", 1)]]);
    let b = record("b.rs", &[&[("delta", 1)], &[("alpha", 1)], &[("gamma", 1)]]);
    let mut index = roundtrip(&Index::from_records([a.clone(), b]));
    assert_eq!(index.file("b.rs").map(|f| f.chunks.len()), Some(3));
    assert!(index.chunk(0).is_some());
    assert_eq!(index.decoded_records(), index.decoded_chunks());
    index.remove("b.rs");
    index.upsert(a);
    assert_eq!(index.decoded_records(), index.decoded_chunks());
    assert_eq!(
        index.decoded_records(),
        1,
        "a.rs's first chunk, decoded alone"
    );
}
