//! F5: a file provenance digest covers exactly the bytes its range
//! addresses (terminators included), ranges compose, and URIs round-trip.

use std::path::{Path, PathBuf};

use contextgraph_provider_sdk::{
    count_lines, file_excerpt, file_uri_to_path, path_to_file_uri, read_range, sha256_digest,
    whole_file_provenance, FileUriError, ProvenanceError,
};
use contextgraph_types::{is_sha256_digest, FrameKind, LineRange, Provenance};
use proptest::prelude::*;

fn range(a: u32, b: u32) -> LineRange {
    LineRange::new(a, b).unwrap()
}

const LF: &[u8] = b"fn a() {}\nfn b() {}\nfn c() {}\n";
const CRLF: &[u8] = b"one\r\ntwo\r\nthree\r\n";
const NO_FINAL_NEWLINE: &[u8] = b"first\nsecond\nlast without newline";

#[test]
fn f5_range_addresses_lines_with_their_terminators() {
    assert_eq!(read_range(LF, range(1, 1)), Some(&b"fn a() {}\n"[..]));
    assert_eq!(
        read_range(LF, range(2, 3)),
        Some(&b"fn b() {}\nfn c() {}\n"[..])
    );
    assert_eq!(read_range(LF, range(1, 3)), Some(LF));
}

#[test]
fn f5_crlf_lines_keep_their_carriage_returns() {
    assert_eq!(read_range(CRLF, range(2, 2)), Some(&b"two\r\n"[..]));
    assert_eq!(read_range(CRLF, range(1, 3)), Some(CRLF));
    assert_eq!(count_lines(CRLF), 3);
}

#[test]
fn f5_last_line_without_newline_runs_to_end_of_file() {
    assert_eq!(
        read_range(NO_FINAL_NEWLINE, range(3, 3)),
        Some(&b"last without newline"[..])
    );
    assert_eq!(
        read_range(NO_FINAL_NEWLINE, range(2, 3)),
        Some(&b"second\nlast without newline"[..])
    );
    assert_eq!(count_lines(NO_FINAL_NEWLINE), 3);
}

#[test]
fn f5_a_range_past_the_end_is_an_error_not_a_short_excerpt() {
    assert_eq!(read_range(LF, range(3, 4)), None);
    assert_eq!(
        read_range(LF, range(4, 4)),
        None,
        "a trailing newline starts no line"
    );
    assert_eq!(read_range(b"", range(1, 1)), None);
    let err = file_excerpt(
        Path::new("/repo/src/lib.rs"),
        LF,
        range(2, 9),
        "read",
        "test",
    )
    .unwrap_err();
    match err {
        ProvenanceError::RangePastEnd { range: r, lines } => {
            assert_eq!(r, range(2, 9));
            assert_eq!(lines, 3);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn f5_excerpt_digest_is_the_sha256_of_exactly_the_addressed_bytes() {
    let excerpt = file_excerpt(
        Path::new("/repo/src/lib.rs"),
        CRLF,
        range(2, 3),
        "file-read",
        "test-provider",
    )
    .unwrap();
    assert_eq!(excerpt.bytes, b"two\r\nthree\r\n");
    assert_eq!(
        excerpt.provenance,
        Provenance {
            kind: "file".into(),
            uri: Some("file:///repo/src/lib.rs".into()),
            range: Some("L2-3".into()),
            digest: Some(sha256_digest(b"two\r\nthree\r\n")),
            method: Some("file-read".into()),
            by: Some("test-provider".into()),
        }
    );
    assert!(is_sha256_digest(
        excerpt.provenance.digest.as_deref().unwrap()
    ));
    // The verifier's view: re-read the same range, hash, compare.
    let again = read_range(
        CRLF,
        LineRange::parse(excerpt.provenance.range.as_deref().unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(Some(sha256_digest(again)), excerpt.provenance.digest);
    assert_eq!(excerpt.label, "lib.rs L2-3");
}

#[test]
fn f5_normalizing_line_endings_would_change_the_digest() {
    let crlf = file_excerpt(Path::new("/f"), b"a\r\n", range(1, 1), "", "").unwrap();
    let lf = file_excerpt(Path::new("/f"), b"a\n", range(1, 1), "", "").unwrap();
    assert_ne!(crlf.provenance.digest, lf.provenance.digest);
    assert_eq!(crlf.provenance.method, None, "empty method is omitted");
}

#[test]
fn f5_whole_file_provenance_has_no_range_and_hashes_everything() {
    let p =
        whole_file_provenance(Path::new("/repo/README.md"), NO_FINAL_NEWLINE, "read", "t").unwrap();
    assert_eq!(p.range, None);
    assert_eq!(p.digest, Some(sha256_digest(NO_FINAL_NEWLINE)));
}

#[test]
fn an_excerpt_becomes_an_honest_frame() {
    let excerpt =
        file_excerpt(Path::new("/repo/src/lib.rs"), LF, range(2, 2), "read", "t").unwrap();
    let frame = excerpt
        .frame("lib.rs#b", FrameKind::Snippet, "fn b")
        .unwrap()
        .score(0.4)
        .build();
    assert_eq!(frame.content.as_deref(), Some("fn b() {}\n"));
    assert_eq!(frame.uri.as_deref(), Some("file:///repo/src/lib.rs"));
    assert_eq!(frame.citation_label.as_deref(), Some("lib.rs L2-2"));
    assert_eq!(frame.provenance, vec![excerpt.provenance.clone()]);
    assert!(frame
        .validate_with(&contextgraph_provider_sdk::Sha256Hasher)
        .is_empty());
}

#[test]
fn a_non_utf8_excerpt_cannot_become_inline_content() {
    let excerpt = file_excerpt(
        Path::new("/bin/blob"),
        b"ok\n\xff\xfe\n",
        range(2, 2),
        "",
        "",
    )
    .unwrap();
    assert!(excerpt.text().is_none());
    assert!(matches!(
        excerpt.frame("x", FrameKind::Snippet, "x"),
        Err(ProvenanceError::NotUtf8 { valid_up_to: 0, .. })
    ));
}

#[test]
fn file_uris_percent_encode_spaces_and_non_uri_characters() {
    let uri = path_to_file_uri(Path::new("/home/me/My Project/naïve #1?.rs")).unwrap();
    assert_eq!(uri, "file:///home/me/My%20Project/na%C3%AFve%20%231%3F.rs");
    assert_eq!(
        file_uri_to_path(&uri).unwrap(),
        PathBuf::from("/home/me/My Project/naïve #1?.rs")
    );
    let percent = path_to_file_uri(Path::new("/100%/x")).unwrap();
    assert_eq!(percent, "file:///100%25/x");
    assert_eq!(
        file_uri_to_path(&percent).unwrap(),
        PathBuf::from("/100%/x")
    );
}

#[test]
fn relative_paths_are_made_absolute() {
    let uri = path_to_file_uri(Path::new("src/lib.rs")).unwrap();
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(file_uri_to_path(&uri).unwrap(), cwd.join("src/lib.rs"));
    assert!(uri.starts_with("file:///"), "{uri}");
}

#[test]
fn file_uri_to_path_accepts_local_forms_and_rejects_the_rest() {
    for ok in [
        "file:///etc/hosts",
        "file://localhost/etc/hosts",
        "file:/etc/hosts",
        "FILE:///etc/hosts",
    ] {
        assert_eq!(
            file_uri_to_path(ok).unwrap(),
            PathBuf::from("/etc/hosts"),
            "{ok}"
        );
    }
    assert!(matches!(
        file_uri_to_path("https://x/y"),
        Err(FileUriError::NotFileScheme(_))
    ));
    assert!(matches!(
        file_uri_to_path("file://server/share/x"),
        Err(FileUriError::RemoteHost { .. })
    ));
    assert!(matches!(
        file_uri_to_path("file:///a?b"),
        Err(FileUriError::QueryOrFragment(_))
    ));
    assert!(matches!(
        file_uri_to_path("file:///a#L3"),
        Err(FileUriError::QueryOrFragment(_))
    ));
    assert!(matches!(
        file_uri_to_path("file:relative"),
        Err(FileUriError::RelativePath(_))
    ));
    assert!(matches!(
        file_uri_to_path("file:///a%2"),
        Err(FileUriError::BadEscape { .. })
    ));
    assert!(matches!(
        file_uri_to_path("file:///a%zz"),
        Err(FileUriError::BadEscape { .. })
    ));
    assert!(matches!(
        file_uri_to_path("file:///a%00b"),
        Err(FileUriError::BadEscape { .. })
    ));
}

/// The module's rule spelled out line by line, as `read_range` was first
/// written: the fast version must agree with it on every file and range.
fn reference_range(file: &[u8], range: LineRange) -> Option<&[u8]> {
    let mut offset = 0usize;
    let mut start = None;
    for (index, line) in file.split_inclusive(|&b| b == b'\n').enumerate() {
        let number = index as u64 + 1;
        if number == u64::from(range.start) {
            start = Some(offset);
        }
        offset += line.len();
        if number == u64::from(range.end) {
            return start.map(|s| &file[s..offset]);
        }
    }
    None
}

proptest! {
    #[test]
    fn read_range_and_count_lines_agree_with_the_line_by_line_rule(
        file in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), any::<u8>()], 0..64),
        a in 1u32..20,
        len in 0u32..20,
    ) {
        let r = range(a, a + len);
        prop_assert_eq!(read_range(&file, r), reference_range(&file, r));
        prop_assert_eq!(count_lines(&file), file.split_inclusive(|&b| b == b'\n').count());
    }

    #[test]
    fn f5_adjacent_ranges_concatenate_to_the_file(
        lines in proptest::collection::vec(("[a-z \t\r]{0,8}", prop_oneof![Just("\n"), Just("\r\n")]), 1..12),
        unterminated_tail in proptest::option::of("[a-z]{1,5}"),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut file = String::new();
        for (text, end) in &lines {
            file.push_str(text);
            file.push_str(end);
        }
        if let Some(tail) = &unterminated_tail {
            file.push_str(tail);
        }
        let file = file.into_bytes();
        let n = count_lines(&file) as u32;
        prop_assert_eq!(n as usize, lines.len() + usize::from(unterminated_tail.is_some()));
        let k = cut.index(n as usize) as u32 + 1; // 1..=n
        let head = read_range(&file, range(1, k)).unwrap();
        let mut joined = head.to_vec();
        if k < n {
            joined.extend_from_slice(read_range(&file, range(k + 1, n)).unwrap());
        }
        prop_assert_eq!(joined, file.clone());
        prop_assert_eq!(read_range(&file, range(1, n + 1)), None);
    }

    #[test]
    fn file_uris_round_trip(segments in proptest::collection::vec("[^/\u{0}]{1,6}", 1..5)) {
        let path = PathBuf::from(format!("/{}", segments.join("/")));
        let uri = path_to_file_uri(&path).unwrap();
        prop_assert!(!uri.contains(' ') && !uri.contains('#') && !uri.contains('?'), "{}", uri);
        prop_assert_eq!(file_uri_to_path(&uri).unwrap(), path);
    }
}
