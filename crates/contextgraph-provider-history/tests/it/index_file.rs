//! The binary stored index (`history.idx`): what is read back is what was
//! built, answers from it are byte-identical to a fresh build's, and a
//! damaged, foreign or hostile file is a typed error and a rebuild. (The
//! story's commits add, modify, rename and delete: every kind of change
//! is stored.)

use contextgraph_provider_history::index_file::{self, IndexFileError, FORMAT, MAX_FILE_BYTES};
use contextgraph_provider_history::search::Searchable;
use contextgraph_provider_history::store::{Store, Stored, LEGACY_FORMAT};
use contextgraph_provider_history::{indexer, HistoryOptions, HistoryProvider};
use contextgraph_search::CacheLocation;

use crate::repo::{ask, ask_raw, story, TestRepo};

/// The header's fields this test rewrites (see `index_file`'s layout).
const FORMAT_AT: usize = 8;
const CHECKSUM_AT: usize = 16;
const SECTIONS_AT: usize = 24;
const HEADER: usize = 72;

/// The index built from `r`'s repository in memory.
fn built(r: &TestRepo) -> Searchable {
    let (snapshot, _) = indexer::build(&r.repo, &r.root(), None, indexer::DEFAULT_CAP)
        .expect("build")
        .expect("commits");
    Searchable::new(snapshot)
}

/// `bytes` with its checksum recomputed: a file written to look valid.
fn rechecksummed(mut bytes: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&bytes[HEADER..]);
    bytes[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// Where section `i` (meta, newer records, older records, lengths, terms,
/// paths) starts.
fn section_start(bytes: &[u8], i: usize) -> usize {
    HEADER
        + (0..i)
            .map(|k| {
                let at = SECTIONS_AT + 8 * k;
                u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes")) as usize
            })
            .sum::<usize>()
}

fn decode(bytes: &[u8]) -> Result<Searchable, IndexFileError> {
    index_file::decode(bytes, std::path::Path::new("history.idx"), "/tree")
}

#[test]
fn what_is_read_back_equals_a_fresh_build() {
    let r = TestRepo::new();
    story(&r);
    let fresh = built(&r);
    let loaded = decode(&index_file::encode(&fresh, "/tree")).expect("decode");
    assert_eq!(loaded, fresh);
}

#[test]
fn answers_from_the_stored_index_are_byte_identical_to_a_fresh_build() {
    let r = TestRepo::new();
    story(&r);
    let uncached = HistoryProvider::open(
        r.dir.path(),
        HistoryOptions {
            cache: CacheLocation::Disabled,
            ..HistoryOptions::default()
        },
    )
    .expect("open");
    // Built and written on first use, then read back by a second open.
    assert_eq!(r.open().commits(), 8);
    let file = r.open().index_file().expect("persisted").to_path_buf();
    assert!(file.exists());
    let warm = r.open();
    let goals = [
        "why does the retry loop back off",
        "when was the config parser changed",
        "history: legacy shim src/lib.rs",
        "what changed in src/net.rs:5",
        "history: nothing matches zzzz",
    ];
    for goal in goals {
        let want = serde_json::to_string(&ask(&uncached, goal)).expect("json");
        let got = serde_json::to_string(&ask(&warm, goal)).expect("json");
        assert_eq!(got, want, "{goal}");
        let want = serde_json::to_string(&ask_raw(&uncached, goal)).expect("json");
        let got = serde_json::to_string(&ask_raw(&warm, goal)).expect("json");
        assert_eq!(got, want, "{goal}");
    }
    assert_eq!(warm.last_build().commits_read, 0);
}

#[test]
fn a_file_cut_at_any_length_is_an_error_not_a_panic() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/tree");
    for len in 0..bytes.len() {
        let err = decode(&bytes[..len]).expect_err("truncated");
        assert!(
            matches!(
                err,
                IndexFileError::Corrupt { .. } | IndexFileError::Format { .. }
            ),
            "{len}: {err}"
        );
    }
    assert!(decode(&bytes).is_ok());
}

#[test]
fn a_flipped_byte_fails_the_checksum() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/tree");
    for at in (HEADER..bytes.len()).step_by(7) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        match decode(&bad) {
            Err(IndexFileError::Corrupt { what, .. }) => assert_eq!(what, "checksum mismatch"),
            other => panic!("byte {at}: {other:?}"),
        }
    }
}

#[test]
fn another_format_or_no_index_at_all_is_a_format_error() {
    let r = TestRepo::new();
    story(&r);
    let mut bytes = index_file::encode(&built(&r), "/tree");
    bytes[FORMAT_AT..FORMAT_AT + 4].copy_from_slice(&(FORMAT + 1).to_le_bytes());
    let err = decode(&bytes).expect_err("newer format");
    assert!(
        matches!(&err, IndexFileError::Format { found, .. } if found == &format!("format {}", FORMAT + 1)),
        "{err}"
    );
    let err = decode(br#"{"format":1,"root":"/tree","head":"","commits":[]} and more bytes to pass the header size"#)
        .expect_err("json");
    assert!(matches!(err, IndexFileError::Format { .. }), "{err}");
    assert!(err.to_string().contains("history.idx"), "{err}");
    assert!(err.to_string().contains("rebuilding"), "{err}");
}

#[test]
fn an_index_of_another_working_tree_is_not_used() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/elsewhere");
    let err = decode(&bytes).expect_err("other tree");
    assert!(
        matches!(&err, IndexFileError::OtherTree { found, .. } if found == "/elsewhere"),
        "{err}"
    );
}

#[test]
fn hostile_counts_behind_a_valid_checksum_are_refused_before_allocating() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/tree");
    // Each count set to u32::MAX: without the bound this would allocate
    // gigabytes; the section cannot hold that many items.
    for section in 1..6 {
        let at = section_start(&bytes, section);
        let mut bad = bytes.clone();
        bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = decode(&rechecksummed(bad)).expect_err("huge count");
        assert!(matches!(err, IndexFileError::Corrupt { .. }), "{err}");
    }
    // A string length past the end of the file (the records' first id).
    let at = section_start(&bytes, 1) + 4;
    let mut bad = bytes.clone();
    bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = decode(&rechecksummed(bad)).expect_err("huge string");
    assert!(matches!(err, IndexFileError::Corrupt { .. }), "{err}");
    // Section lengths that do not add up to the file.
    let mut bad = bytes.clone();
    bad[SECTIONS_AT..SECTIONS_AT + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = decode(&bad).expect_err("lengths");
    assert!(matches!(err, IndexFileError::Corrupt { .. }), "{err}");
}

#[test]
fn a_posting_past_the_last_commit_is_refused() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/tree");
    // The first term: its length, its bytes, its posting count, then the
    // first posting's commit position.
    let terms = section_start(&bytes, 4) + 4;
    let term_len = u32::from_le_bytes(bytes[terms..terms + 4].try_into().expect("4")) as usize;
    let at = terms + 4 + term_len + 4;
    let mut bad = bytes.clone();
    bad[at..at + 4].copy_from_slice(&1_000_000u32.to_le_bytes());
    match decode(&rechecksummed(bad)) {
        Err(IndexFileError::Corrupt { what, .. }) => {
            assert_eq!(what, "a posting past the last commit")
        }
        other => panic!("{other:?}"),
    }
    // The same for a path's commit list (the first path's first commit).
    let paths = section_start(&bytes, 5) + 4;
    let path_len = u32::from_le_bytes(bytes[paths..paths + 4].try_into().expect("4")) as usize;
    let at = paths + 4 + path_len + 4;
    let mut bad = bytes.clone();
    bad[at..at + 4].copy_from_slice(&1_000_000u32.to_le_bytes());
    match decode(&rechecksummed(bad)) {
        Err(IndexFileError::Corrupt { what, .. }) => {
            assert_eq!(what, "a path's commit past the last commit")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_damaged_file_on_disk_is_rebuilt_and_rewritten() {
    let r = TestRepo::new();
    story(&r);
    let want = serde_json::to_string(&ask(&r.open(), "retry loop")).expect("json");
    let file = r.open().index_file().expect("persisted").to_path_buf();
    let good = std::fs::read(&file).expect("index");
    std::fs::write(&file, &good[..good.len() / 2]).expect("truncate");
    let reopened = r.open();
    assert_eq!(
        serde_json::to_string(&ask(&reopened, "retry loop")).expect("json"),
        want
    );
    assert_eq!(reopened.last_build().commits_read, 8, "rebuilt whole");
    let store = Store::new(file.parent().expect("dir"), &r.root());
    assert!(matches!(store.load(), Ok(Some(Stored::Index(_)))));
}

#[test]
fn a_file_larger_than_the_bound_is_not_read() {
    let r = TestRepo::new();
    story(&r);
    assert_eq!(r.open().commits(), 8);
    let file = r.open().index_file().expect("persisted").to_path_buf();
    // Sparse: no disk space is used, and nothing may read it whole.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_len(MAX_FILE_BYTES + 1))
        .expect("grow");
    let store = Store::new(file.parent().expect("dir"), &r.root());
    let err = store.load().expect_err("too large");
    assert!(matches!(err, IndexFileError::TooLarge { .. }), "{err}");
    // The provider still answers (rebuilt) and replaces the file.
    assert_eq!(r.open().commits(), 8);
    assert!(std::fs::metadata(&file).expect("file").len() < 1 << 20);
}

#[test]
fn a_legacy_json_index_is_converted_and_removed() {
    let r = TestRepo::new();
    story(&r);
    let want = serde_json::to_string(&ask(&r.open(), "retry loop")).expect("json");
    let file = r.open().index_file().expect("persisted").to_path_buf();
    let store = Store::new(file.parent().expect("dir"), &r.root());
    let Ok(Some(Stored::Index(index))) = store.load() else {
        panic!("no stored index");
    };
    // What an older version wrote: records only, as JSON, and no binary file.
    let mut legacy = serde_json::to_value(&index.snapshot).expect("json");
    legacy["format"] = LEGACY_FORMAT.into();
    legacy["root"] = r.root().to_string_lossy().into_owned().into();
    std::fs::write(
        store.legacy_file(),
        serde_json::to_vec(&legacy).expect("json"),
    )
    .expect("write");
    std::fs::remove_file(&file).expect("rm");
    assert!(matches!(store.load(), Ok(Some(Stored::Legacy(_)))));
    let reopened = r.open();
    assert_eq!(
        serde_json::to_string(&ask(&reopened, "retry loop")).expect("json"),
        want
    );
    // Nothing re-read from the repository: the JSON was the starting point.
    assert_eq!(reopened.last_build().commits_read, 0);
    assert!(file.exists(), "converted");
    assert!(!store.legacy_file().exists(), "legacy file left behind");
    assert!(matches!(store.load(), Ok(Some(Stored::Index(_)))));
}

/// The six sections of a stored index, to rewrite one and reassemble.
fn sections(bytes: &[u8]) -> Vec<Vec<u8>> {
    (0..6)
        .map(|i| bytes[section_start(bytes, i)..section_start(bytes, i + 1)].to_vec())
        .collect()
}

/// A well-formed file (header, lengths, checksum) around `sections`.
fn assembled(template: &[u8], sections: &[Vec<u8>]) -> Vec<u8> {
    let mut out = template[..HEADER].to_vec();
    for (i, s) in sections.iter().enumerate() {
        let at = SECTIONS_AT + 8 * i;
        out[at..at + 8].copy_from_slice(&(s.len() as u64).to_le_bytes());
    }
    for s in sections {
        out.extend_from_slice(s);
    }
    rechecksummed(out)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The reason a file written to look valid is refused.
fn refusal(bytes: &[u8]) -> String {
    match decode(bytes) {
        Err(IndexFileError::Corrupt { what, .. }) => what,
        other => panic!("{other:?}"),
    }
}

#[test]
fn inconsistent_sections_behind_a_valid_checksum_are_refused() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/tree");
    let good = sections(&bytes);
    assert_eq!(decode(&assembled(&bytes, &good)).expect("same"), built(&r));

    // One commit length fewer than there are commits.
    let mut s = good.clone();
    let n = u32_at(&s[3], 0);
    let shorter = s[3].len() - 4;
    s[3].truncate(shorter);
    s[3][..4].copy_from_slice(&(n - 1).to_le_bytes());
    assert_eq!(
        refusal(&assembled(&bytes, &s)),
        "a commit length count that is not the commit count"
    );

    // A byte after the end of a section.
    let mut s = good.clone();
    s[0].push(0);
    assert_eq!(
        refusal(&assembled(&bytes, &s)),
        "bytes after the end of a section"
    );

    // A flag that is not 0 or 1 (`truncated`, after the root and the head).
    let mut s = good.clone();
    let root = 4 + u32_at(&s[0], 0) as usize;
    let flag = root + 4 + u32_at(&s[0], root) as usize;
    s[0][flag] = 2;
    assert_eq!(
        refusal(&assembled(&bytes, &s)),
        "a flag that is neither 0 nor 1"
    );

    // A term listed twice, and a term whose postings go backwards.
    for (term, postings, want) in [
        ("zzdup", vec![(0u32, 1u16)], None),
        (
            "zzback",
            vec![(1, 1), (0, 1)],
            Some("postings out of order"),
        ),
    ] {
        let mut s = good.clone();
        let count = u32_at(&s[4], 0);
        let mut entry = Vec::new();
        entry.extend_from_slice(&(term.len() as u32).to_le_bytes());
        entry.extend_from_slice(term.as_bytes());
        entry.extend_from_slice(&(postings.len() as u32).to_le_bytes());
        for (pos, tf) in postings {
            entry.extend_from_slice(&pos.to_le_bytes());
            entry.extend_from_slice(&tf.to_le_bytes());
        }
        let copies = if want.is_none() { 2 } else { 1 };
        for _ in 0..copies {
            s[4].extend_from_slice(&entry);
        }
        s[4][..4].copy_from_slice(&(count + copies).to_le_bytes());
        assert_eq!(
            refusal(&assembled(&bytes, &s)),
            want.unwrap_or("a term listed twice")
        );
    }

    // An unknown kind of change: the newest commit's first path's letter.
    let mut s = good.clone();
    let rec = &s[1];
    let mut at = 4;
    let skip_str = |at: &mut usize| *at += 4 + u32_at(rec, *at) as usize;
    skip_str(&mut at); // id
    skip_str(&mut at); // author
    at += 16; // times
    skip_str(&mut at); // subject
    skip_str(&mut at); // body
    at += 4 + 4 + 1 + 1; // parents, withheld, refused, boundary
    assert!(u32_at(rec, at) > 0, "the newest commit changed a path");
    at += 4;
    skip_str(&mut at); // path
    assert_eq!(rec[at], 0, "no rename");
    at += 1;
    s[1][at] = 9;
    assert_eq!(refusal(&assembled(&bytes, &s)), "an unknown kind of change");
}

#[test]
fn a_commit_listed_twice_is_refused() {
    let r = TestRepo::new();
    story(&r);
    // Twice in the newer records, and once in each half.
    for at in [1, 8] {
        let mut index = built(&r);
        let first = index.snapshot.commits[0].clone();
        index.snapshot.commits.insert(at, first);
        let bytes = index_file::encode(&Searchable::new(index.snapshot), "/tree");
        assert_eq!(refusal(&bytes), "a commit listed twice", "{at}");
    }
}

#[test]
fn a_legacy_json_index_that_does_not_parse_is_rebuilt_and_removed() {
    let r = TestRepo::new();
    story(&r);
    let file = r.open().index_file().expect("persisted").to_path_buf();
    assert_eq!(r.open().commits(), 8);
    let store = Store::new(file.parent().expect("dir"), &r.root());
    std::fs::write(store.legacy_file(), b"{\"format\":1,\"root\":").expect("write");
    std::fs::remove_file(&file).expect("rm");
    assert!(matches!(store.load(), Ok(None)));
    let reopened = r.open();
    assert_eq!(reopened.commits(), 8);
    assert_eq!(
        reopened.last_build().commits_read,
        8,
        "built from the repository"
    );
    assert!(file.exists());
    assert!(!store.legacy_file().exists(), "legacy file left behind");
}

/// A small deterministic generator (xorshift64*): the mutations below are
/// the same on every run, so a failure names its iteration.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `bytes` changed in one to three places, behind a recomputed checksum
/// (a file written to look valid): a byte, a 32-bit count or position set
/// to an extreme or random value, or the file cut short.
fn mutated(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(3) {
        match rng.below(4) {
            0 => {
                let at = HEADER + rng.below(out.len() - HEADER);
                out[at] = rng.next() as u8;
            }
            1 | 2 => {
                let at = HEADER + rng.below(out.len() - HEADER - 4);
                let v = match rng.below(5) {
                    0 => 0,
                    1 => 1,
                    2 => u32::MAX,
                    3 => out.len() as u32,
                    _ => rng.next() as u32,
                };
                out[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                let keep = HEADER + 8 + rng.below(out.len() - HEADER - 8);
                out.truncate(keep);
            }
        }
    }
    rechecksummed(out)
}

/// Use a decoded index everywhere a query reads it.
fn exercise(index: &Searchable) {
    let words: Vec<String> = ["retry", "loop", "config", "src", "rs"]
        .iter()
        .map(|w| (*w).to_owned())
        .collect();
    std::hint::black_box(index.bm25(&words));
    for p in ["src/net.rs", "src/settings.rs", ""] {
        std::hint::black_box(index.touching(p));
        std::hint::black_box(index.co_changed(p, 50, 10));
    }
    for pos in 0..index.len() as u32 + 2 {
        if let Some(c) = index.commit(pos) {
            assert_eq!(index.position(&c.id), Some(pos));
        }
    }
}

#[test]
fn mutated_files_behind_a_valid_checksum_decode_or_are_refused_never_panic() {
    let r = TestRepo::new();
    story(&r);
    let bytes = index_file::encode(&built(&r), "/tree");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut opened, mut refused) = (0, 0);
    for i in 0..2_000 {
        let bad = mutated(&bytes, &mut rng);
        match decode(&bad) {
            Ok(index) => {
                opened += 1;
                exercise(&index);
                // What opened re-encodes to a file that opens the same.
                let again = decode(&index_file::encode(&index, "/tree"))
                    .unwrap_or_else(|e| panic!("iteration {i}: {e}"));
                assert_eq!(again, index, "iteration {i}");
            }
            Err(_) => refused += 1,
        }
    }
    // Both outcomes were reached: the mutations are neither all fatal nor
    // all harmless (a byte inside a subject or a body opens fine).
    assert!(
        opened > 50 && refused > 50,
        "{opened} opened, {refused} refused"
    );
}

#[test]
fn the_provider_answers_from_any_mutated_index_without_panicking() {
    let r = TestRepo::new();
    story(&r);
    let file = r.open().index_file().expect("persisted").to_path_buf();
    assert_eq!(r.open().commits(), 8);
    let good = std::fs::read(&file).expect("index");
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..120 {
        std::fs::write(&file, mutated(&good, &mut rng)).expect("write");
        let p = r.open();
        std::hint::black_box(ask(&p, "why does the retry loop back off src/net.rs:5"));
        std::hint::black_box(p.notes());
    }
}
