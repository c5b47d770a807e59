use std::path::Path;

use contextgraph_types::Timestamp;

use super::*;
use crate::index::FileRecord;
use crate::refresh::index_file;
use crate::walk::{walk, WalkOptions};

const RUST: &str = "//! Wire.\nuse crate::net::Client;\nuse super::codec;\nmod frame;\n\n/// Sends.\npub fn send(c: Client) -> u32 {\n    codec::encode(c.id)\n}\n\npub struct Reply {\n    pub n: u32,\n}\n\nimpl Reply {\n    pub fn new() -> Reply {\n        Reply { n: send(Client::default()) }\n    }\n}\n";
const PYTHON: &str = "from . import wire\nfrom .codec import encode\nimport os\n\n\nclass Client:\n    def send(self, x):\n        return encode(wire.pack(x))\n";
const MARKDOWN: &str = "Intro line with `send`.\n\n# Usage\n\nCall `send`.\n";

/// A tree where the same bytes sit under paths that agree or differ in
/// everything the chunker reads besides them: crate versions side by side
/// (same module paths, other directories: imports resolve elsewhere), one
/// file name under two module paths, a copy under another name (not held:
/// only copies with one name are), Markdown under its own and another
/// name, and a file of a unique size.
fn tree(root: &Path) {
    let files: &[(&str, &str)] = &[
        ("wire-1.0/src/wire/mod.rs", RUST),
        ("wire-1.1/src/wire/mod.rs", RUST),
        ("wire-1.1/src/codec/mod.rs", RUST),
        ("wire-1.1/src/wire.rs", RUST),
        ("wire-1.1/src/other.rs", RUST),
        ("wire-1.1/benches/other.rs", RUST),
        ("py/a/net.py", PYTHON),
        ("py/b/net.py", PYTHON),
        ("py/b/client.py", PYTHON),
        ("wire-1.0/README.md", MARKDOWN),
        ("wire-1.1/README.md", MARKDOWN),
        ("wire-1.1/GUIDE.md", MARKDOWN),
        ("notes/a/NOTES.txt", MARKDOWN),
        ("notes/b/NOTES.txt", MARKDOWN),
        ("wire-1.1/src/unique.rs", "fn only_one() {}\n"),
    ];
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
}

fn now() -> Timestamp {
    Timestamp::from_system_time(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1 << 31))
}

/// Every file of `root` indexed in walk order through `same`.
fn index_all(root: &Path, same: &SameContent) -> Vec<FileRecord> {
    walk(root, &WalkOptions::default())
        .files
        .iter()
        .map(|f| {
            index_file(f, None, now(), &WalkOptions::default(), None, same)
                .expect("readable")
                .0
        })
        .collect()
}

/// The records of files whose bytes an earlier file had are exactly those
/// chunking them afresh gives: names qualified by their own module path,
/// imports resolved from their own directory, Markdown titled by their own
/// file name. A key missing any of these inputs fails here.
#[test]
fn reused_records_are_those_chunking_gives() {
    let dir = tempfile::tempdir().expect("tempdir");
    tree(dir.path());
    let files = walk(dir.path(), &WalkOptions::default()).files;
    assert_eq!(files.len(), 15);
    let same = SameContent::for_files(&files);
    let reused = index_all(dir.path(), &same);
    // Nothing held: every file chunked afresh.
    let fresh = index_all(dir.path(), &SameContent::default());
    assert_eq!(reused.len(), fresh.len());
    for (a, b) in reused.iter().zip(&fresh) {
        assert_eq!(a, b, "{}", a.rel_path);
    }
    // The fixture is about what it claims: the copies differ in names and
    // in import candidates, and contents were held for reuse.
    let by_path = |p: &str| {
        fresh
            .iter()
            .find(|r| r.rel_path == p)
            .unwrap_or_else(|| panic!("{p} indexed"))
    };
    let qualified = |r: &FileRecord| {
        r.chunks
            .iter()
            .filter_map(|c| c.symbol.as_ref().map(|s| s.qualified.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        qualified(by_path("wire-1.0/src/wire/mod.rs")),
        qualified(by_path("wire-1.1/src/wire.rs"))
    );
    assert_ne!(
        qualified(by_path("wire-1.1/src/wire/mod.rs")),
        qualified(by_path("wire-1.1/src/codec/mod.rs"))
    );
    let imports = |r: &FileRecord| {
        r.chunks
            .iter()
            .flat_map(|c| c.imports.iter().flat_map(|i| i.candidates.clone()))
            .collect::<Vec<_>>()
    };
    for (a, b) in [
        ("wire-1.0/src/wire/mod.rs", "wire-1.1/src/wire/mod.rs"),
        ("py/a/net.py", "py/b/net.py"),
    ] {
        assert!(!imports(by_path(a)).is_empty(), "{a} has candidates");
        assert_ne!(imports(by_path(a)), imports(by_path(b)), "{a} vs {b}");
    }
    assert_ne!(
        by_path("wire-1.1/README.md").chunks[0].title,
        by_path("wire-1.1/GUIDE.md").chunks[0].title
    );
    // Held once per key of a shared (size, name): `mod.rs` under modules
    // `wire` (2 files) and `codec`, `other.rs` (2 files, one module path),
    // `net.py` under two module paths, `README.md`, `NOTES.txt`.
    assert_eq!(same.held(), 7);
    // Once every file of a group is finished, its records go.
    for f in &files {
        same.finished(f);
    }
    assert_eq!(same.held(), 0);
}

/// A file whose key is held is served from the records held, not chunked
/// again (records planted under its key come back); a file whose size
/// and name no other file of the batch has is never looked up.
#[test]
fn a_held_content_is_served_not_chunked_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    tree(dir.path());
    let files = walk(dir.path(), &WalkOptions::default()).files;
    let same = SameContent::for_files(&files);
    let file = files
        .iter()
        .find(|f| f.rel_path == "wire-1.1/src/wire/mod.rs")
        .expect("walked");
    let hash = crate::index::sha256(RUST.as_bytes());
    let key = same
        .key(file, Language::Rust, hash)
        .expect("a shared size and name");
    let mut planted = index_file(
        file,
        None,
        now(),
        &WalkOptions::default(),
        None,
        &SameContent::default(),
    )
    .expect("readable")
    .0
    .chunks;
    planted.truncate(1);
    planted[0].title = "planted".into();
    same.put(file, key, &planted);
    let served = index_file(file, None, now(), &WalkOptions::default(), None, &same)
        .expect("readable")
        .0;
    assert_eq!(served.chunks.len(), 1);
    assert_eq!(served.chunks[0].title, "planted");
    // A unique size, or a shared size under a unique name, is never a key.
    for path in ["wire-1.1/src/unique.rs", "wire-1.1/src/wire.rs"] {
        let file = files.iter().find(|f| f.rel_path == path).expect("walked");
        assert!(same.key(file, Language::Rust, hash).is_none(), "{path}");
    }
}
