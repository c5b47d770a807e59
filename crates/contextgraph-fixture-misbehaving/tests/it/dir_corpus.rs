//! `--dir`: a folder's text files are served with real provenance (F5), one
//! frame per file or per 20-line window; hidden, binary and non-UTF-8 files
//! are not served.

use crate::common;

use std::collections::BTreeMap;

use common::{assert_honest, frames_of, query, Provider};
use contextgraph_types::FrameKind;

#[test]
fn f5_a_folder_is_served_in_windows_with_provenance_that_rereads_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let long: String = (1..=45)
        .map(|i| format!("fn line_{i}() {{ retry(); }}\n"))
        .collect();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("notes.md"), "# Notes\n\nretry notes\n").unwrap();
    std::fs::write(dir.path().join("src/long.rs"), &long).unwrap();
    std::fs::write(dir.path().join(".hidden.md"), "retry secret\n").unwrap();
    std::fs::write(dir.path().join("blob.bin"), b"retry\xff\xfe\n").unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let mut p = Provider::spawn(&["--dir", dir_arg]);
    p.handshake();
    let q = query("retry notes", 50, 100_000);
    let result = frames_of(&p.query("q", &q), "q");
    assert_honest(&result, &q);
    let ranges: BTreeMap<String, String> = result
        .frames
        .iter()
        .map(|f| {
            let p = f.file_provenance().next().expect("file provenance");
            (f.id.clone(), p.range.clone().expect("range"))
        })
        .collect();
    let expected: BTreeMap<String, String> = [
        ("notes.md#L1-3", "L1-3"),
        ("src/long.rs#L1-20", "L1-20"),
        ("src/long.rs#L21-40", "L21-40"),
        ("src/long.rs#L41-45", "L41-45"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b.to_owned()))
    .collect();
    assert_eq!(ranges, expected);
    let kind = |id: &str| {
        result
            .frames
            .iter()
            .find(|f| f.id == id)
            .unwrap()
            .kind
            .clone()
    };
    assert_eq!(kind("notes.md#L1-3"), FrameKind::Doc);
    assert_eq!(kind("src/long.rs#L1-20"), FrameKind::Snippet);
    assert_eq!(p.shutdown().code(), Some(0));
    assert!(
        dir.path().join("notes.md").exists(),
        "a --dir folder is never deleted"
    );
}

#[test]
fn a_missing_folder_is_refused_at_start_with_a_message() {
    let mut p = Provider::spawn(&["--dir", "/definitely/not/here"]);
    let status = p.wait_exit(common::EXIT_DEADLINE).expect("exits");
    assert_eq!(status.code(), Some(1));
    let stderr = p.final_stderr();
    assert!(stderr.contains("/definitely/not/here"), "{stderr}");
}
