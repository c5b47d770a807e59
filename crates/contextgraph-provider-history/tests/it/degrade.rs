//! A shallow clone (and missing objects) degrade to what is there, with a note.

use crate::repo::{ask, story, TestRepo};

#[test]
fn a_shallow_clone_serves_what_it_holds_and_says_so() {
    let r = TestRepo::new();
    let s = story(&r);
    // Make it shallow as `git clone --depth` leaves it: the boundary commit
    // listed in `.git/shallow`, its parent's objects absent.
    std::fs::write(
        r.repo.path().join("shallow"),
        format!("{}\n", s.rename_config),
    )
    .expect("shallow");
    let parent = s.fix_backoff.to_string();
    let loose = r
        .repo
        .path()
        .join("objects")
        .join(&parent[..2])
        .join(&parent[2..]);
    std::fs::remove_file(&loose).expect("remove the parent commit object");
    let p = r.open();
    let notes = p.notes();
    assert!(
        notes.iter().any(|n| n.contains("shallow clone")),
        "{notes:?}"
    );
    // 5 commits from the boundary to HEAD.
    assert_eq!(p.commits(), 5);
    // Older history is not served; the boundary says what it cannot know.
    assert!(ask(&p, "retry loop")
        .iter()
        .all(|f| !f.id.starts_with(&s.add_retry.to_string())));
    let boundary = ask(&p, "rename config settings")
        .into_iter()
        .find(|f| f.id.starts_with(&s.rename_config.to_string()))
        .expect("the boundary commit");
    assert!(boundary
        .content
        .as_deref()
        .is_some_and(|c| c.contains("not in this shallow clone")));
}

#[test]
fn a_directory_outside_any_repository_is_a_typed_error() {
    let dir = tempfile::tempdir().expect("temp");
    let err = contextgraph_provider_history::HistoryProvider::open(
        dir.path(),
        contextgraph_provider_history::HistoryOptions::default(),
    )
    .expect_err("not a repository");
    assert!(
        matches!(
            err,
            contextgraph_provider_history::HistoryError::NotARepository { .. }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(&dir.path().display().to_string()));
}

#[cfg(unix)]
#[test]
fn an_index_in_a_directory_others_can_write_is_not_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let r = TestRepo::new();
    story(&r);
    let p = r.open();
    // Loaded (and so written) on first use.
    assert_eq!(p.commits(), 8);
    let file = p.index_file().expect("persisted").to_path_buf();
    // Another user could have planted this: a subject no commit has (a
    // well-formed index, checksum and all, written through the store).
    let store =
        contextgraph_provider_history::store::Store::new(file.parent().expect("dir"), &r.root());
    let Ok(Some(contextgraph_provider_history::store::Stored::Index(index))) = store.load() else {
        panic!("no stored index");
    };
    let mut snapshot = index.snapshot;
    let before = snapshot.clone();
    for c in &mut snapshot.commits {
        c.subject = c.subject.replace(
            "Fix backoff overflow in the retry loop",
            "Planted subject about the retry loop",
        );
    }
    assert_ne!(snapshot, before);
    store
        .save(&contextgraph_provider_history::search::Searchable::new(
            snapshot,
        ))
        .expect("forge");
    let dir = file.parent().expect("dir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let reopened = r.open();
    let all = serde_json::to_string(&ask(&reopened, "retry loop")).expect("json");
    assert!(!all.contains("Planted subject"), "{all}");
    assert!(all.contains("Fix backoff overflow"), "{all}");
    // Private again: the forged file is read (it is ours), which shows the
    // check above is what kept it out.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let trusting = r.open();
    assert!(serde_json::to_string(&ask(&trusting, "retry loop"))
        .expect("json")
        .contains("Planted subject"));
}
