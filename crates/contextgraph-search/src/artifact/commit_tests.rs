use super::*;

const A: &str = "0123456789abcdef0123456789abcdef01234567";
const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git/refs/heads")).unwrap();
    dir
}

#[test]
fn a_plain_directory_has_no_commit() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(head_commit(dir.path()).unwrap(), Commit::None);
}

#[test]
fn a_branch_is_resolved_through_its_loose_ref() {
    let dir = repo();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(dir.path().join(".git/refs/heads/main"), format!("{A}\n")).unwrap();
    assert_eq!(
        head_commit(dir.path()).unwrap(),
        Commit::Git {
            id: A.into(),
            head: Some("refs/heads/main".into())
        }
    );
}

#[test]
fn a_packed_ref_and_a_detached_head_are_read() {
    let dir = repo();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/rel\n").unwrap();
    std::fs::write(
        dir.path().join(".git/packed-refs"),
        format!("# pack-refs with: peeled fully-peeled sorted\n{B} refs/heads/other\n{A} refs/heads/rel\n^{B}\n"),
    )
    .unwrap();
    assert_eq!(head_commit(dir.path()).unwrap().id(), Some(A));
    std::fs::write(dir.path().join(".git/HEAD"), format!("{B}\n")).unwrap();
    assert_eq!(
        head_commit(dir.path()).unwrap(),
        Commit::Git {
            id: B.into(),
            head: None
        }
    );
}

#[test]
fn a_worktree_reads_head_from_its_gitdir_and_refs_from_the_common_dir() {
    let main = repo();
    std::fs::write(main.path().join(".git/refs/heads/topic"), format!("{B}\n")).unwrap();
    let own = main.path().join(".git/worktrees/wt");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("HEAD"), "ref: refs/heads/topic\n").unwrap();
    std::fs::write(own.join("commondir"), "../..\n").unwrap();
    let wt = tempfile::tempdir().unwrap();
    std::fs::write(
        wt.path().join(".git"),
        format!("gitdir: {}\n", own.display()),
    )
    .unwrap();
    assert_eq!(head_commit(wt.path()).unwrap().id(), Some(B));
}

#[test]
fn what_is_not_a_commit_or_a_ref_is_refused_with_the_reason() {
    let dir = repo();
    for (head, why) in [
        ("ref: refs/heads/../../../etc/passwd\n", "not a ref"),
        ("ref: refs/heads/unborn\n", "does not exist yet"),
        ("not-a-commit\n", "not a commit id"),
        (
            "0123456789ABCDEF0123456789ABCDEF01234567\n",
            "not a commit id",
        ),
    ] {
        std::fs::write(dir.path().join(".git/HEAD"), head).unwrap();
        let e = head_commit(dir.path()).unwrap_err().to_string();
        assert!(e.contains(why), "{head:?}: {e}");
    }
    std::fs::write(dir.path().join(".git/HEAD"), "x".repeat(5000)).unwrap();
    let e = head_commit(dir.path()).unwrap_err().to_string();
    assert!(e.contains("larger than"), "{e}");
}

#[test]
fn a_symbolic_ref_loop_ends_in_an_error() {
    let dir = repo();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/a\n").unwrap();
    std::fs::write(dir.path().join(".git/refs/heads/a"), "ref: refs/heads/b\n").unwrap();
    std::fs::write(dir.path().join(".git/refs/heads/b"), "ref: refs/heads/a\n").unwrap();
    let e = head_commit(dir.path()).unwrap_err().to_string();
    assert!(e.contains("symbolic refs"), "{e}");
}

#[test]
fn the_same_commit_ignores_the_branch_name() {
    let a = Commit::Git {
        id: A.into(),
        head: Some("refs/heads/main".into()),
    };
    let detached = Commit::Git {
        id: A.into(),
        head: None,
    };
    assert!(a.same_commit(&detached));
    assert!(!a.same_commit(&Commit::None));
}
