//! `cgp cache list|clear` end to end: where the index cache lives and what
//! each workspace's index takes; clearing one workspace, the gone ones or
//! all, with confirmation; and never a byte deleted outside the cache
//! directory, through symbolic links or otherwise.

use contextgraph_testkit::sandbox::Sandbox;
use std::path::{Path, PathBuf};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A sandbox whose workspaces `ws` and `other` both have an index.
fn indexed() -> Sandbox {
    let s = Sandbox::new(crate::CGP);
    s.write("other/.git/HEAD", "ref: refs/heads/main\n");
    s.write("other/src/lib.rs", "pub fn other_backoff() {}\n");
    for dir in ["ws", "other"] {
        let d = s.path(dir);
        let out = s.run(&["-q", "context", "backoff", "--dir", d.to_str().unwrap()]);
        assert!(
            out.status.code().is_some_and(|c| c == 0 || c == 3),
            "{}",
            stderr(&out)
        );
    }
    s
}

fn entries(s: &Sandbox) -> Vec<serde_json::Value> {
    let out = s.run(&["cache", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format_version"], 1);
    assert_eq!(v["base"], s.path("cache").to_str().unwrap());
    v["entries"].as_array().unwrap().clone()
}

fn workspaces(s: &Sandbox) -> Vec<String> {
    let mut w: Vec<String> = entries(s)
        .iter()
        .map(|e| e["workspace"].as_str().unwrap_or("?").to_owned())
        .collect();
    w.sort();
    w
}

fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn list_shows_the_base_and_each_workspace_with_its_size() {
    let s = Sandbox::new(crate::CGP);
    let out = s.run(&["cache", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(0 indexes, 0 B)"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("(empty"), "{}", stdout(&out));
    let s = indexed();
    let list = entries(&s);
    assert_eq!(list.len(), 2, "{list:?}");
    for e in &list {
        assert!(e["bytes"].as_u64().unwrap() > 0, "{e}");
        assert_eq!(e["workspace_exists"], true);
    }
    let mut expected = vec![canonical(&s.path("ws")), canonical(&s.path("other"))];
    expected.sort();
    assert_eq!(workspaces(&s), expected);
    let text = stdout(&s.run(&["cache", "list"]));
    assert!(text.contains("(2 indexes,"), "{text}");
    assert!(text.contains(&canonical(&s.path("other"))), "{text}");
}

#[test]
fn clearing_a_workspace_removes_its_index_only() {
    let s = indexed();
    let out = s.run(&["cache", "clear", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("deleted 1 index"), "{}", stderr(&out));
    assert_eq!(workspaces(&s), vec![canonical(&s.path("other"))]);
    // Again: nothing left to clear, said plainly, still a success.
    let out = s.run(&["cache", "clear", "."]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("nothing to clear"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn all_and_gone_need_confirmation_off_a_terminal_and_dry_run_deletes_nothing() {
    let s = indexed();
    let out = s.run(&["cache", "clear", "--all"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    assert_eq!(entries(&s).len(), 2, "nothing deleted without --yes");
    let out = s.run(&["cache", "clear", "--all", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("would delete"), "{}", stderr(&out));
    assert_eq!(entries(&s).len(), 2, "nothing deleted by --dry-run");

    // --gone: only the index whose workspace is no longer there.
    std::fs::remove_dir_all(s.path("other")).unwrap();
    let gone = entries(&s)
        .iter()
        .filter(|e| e["workspace_exists"] == false)
        .count();
    assert_eq!(gone, 1);
    let out = s.run(&["cache", "clear", "--gone", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(workspaces(&s), vec![canonical(&s.path("ws"))]);

    let out = s.run(&["cache", "clear", "--all", "-y"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(entries(&s).is_empty());
}

#[test]
fn nothing_outside_the_cache_is_deleted_even_through_symlinks() {
    let s = indexed();
    let base = s.path("cache");
    // Precious files outside the cache, reachable through links inside it.
    let precious = s.path("precious");
    std::fs::create_dir_all(precious.join("dir")).unwrap();
    std::fs::write(precious.join("keep.txt"), "keep").unwrap();
    std::fs::write(precious.join("dir/keep.txt"), "keep").unwrap();
    // An entry-shaped name that is a link to a directory outside.
    std::os::unix::fs::symlink(&precious, base.join("00000000deadbeef")).unwrap();
    // Links inside a real entry, to a file and a directory outside.
    let real = entries(&s)[0]["path"].as_str().unwrap().to_owned();
    std::os::unix::fs::symlink(precious.join("keep.txt"), Path::new(&real).join("link.bin"))
        .unwrap();
    std::os::unix::fs::symlink(precious.join("dir"), Path::new(&real).join("linkdir")).unwrap();
    // Things in the base that are not indexes at all.
    std::fs::write(base.join("notes.txt"), "mine").unwrap();
    std::fs::create_dir_all(base.join("not-an-index")).unwrap();
    std::fs::write(base.join("not-an-index/data"), "mine").unwrap();

    let out = s.run(&["cache", "clear", "--all", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for kept in [
        precious.join("keep.txt"),
        precious.join("dir/keep.txt"),
        base.join("notes.txt"),
        base.join("not-an-index/data"),
    ] {
        assert!(kept.is_file(), "{} survives", kept.display());
    }
    assert!(
        std::fs::symlink_metadata(base.join("00000000deadbeef")).is_err(),
        "the link itself is gone"
    );
    let left: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left.len(), 2, "only what is not an index is left: {left:?}");
}
