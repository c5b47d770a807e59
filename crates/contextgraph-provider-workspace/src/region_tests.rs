//! A frame's region is read through [`FileCache::lines`] (each file's lines
//! found once per query), and must be exactly what the SDK's `read_range`
//! (the rule a verifier re-reads by) gives for every range of every file.

use contextgraph_provider_sdk::read_range;
use contextgraph_search::FileCache;
use contextgraph_types::LineRange;

#[test]
fn a_region_read_through_the_cache_is_read_range() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files: [&[u8]; 8] = [
        b"",
        b"\n",
        b"one",
        b"one\n",
        b"one\ntwo",
        b"one\r\ntwo\r\n\r\nfour\n\n",
        b"\n\nthree\n",
        b"bad \xff utf-8\nline \xc3\n\xe2\x82\xac end",
    ];
    let mut cache = FileCache::default();
    let mut checked = 0;
    for (n, bytes) in files.iter().enumerate() {
        let rel = format!("f{n}.txt");
        std::fs::write(dir.path().join(&rel), bytes).expect("write");
        for start in 0..7u32 {
            for end in 0..7u32 {
                let expected = LineRange::new(start, end).and_then(|r| read_range(bytes, r));
                let got = LineRange::new(start, end)
                    .and_then(|_| cache.lines(dir.path(), &rel, start, end));
                assert_eq!(got, expected, "{bytes:?} lines {start}..={end}");
                checked += usize::from(expected.is_some());
            }
        }
    }
    assert!(checked > 20);
    assert_eq!(cache.lines(dir.path(), "missing.txt", 1, 1), None);
}
