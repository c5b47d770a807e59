//! Persistent, incremental index: a second open answers from the stored
//! index; refresh re-chunks only files whose content hash changed, and
//! handles edits, deletes and renames.

use crate::common::{ask, q, Fixture};
use contextgraph_provider_workspace::{IndexSource, WorkspaceProvider};

#[test]
fn second_open_loads_the_persisted_index_and_answers_immediately() {
    let f = Fixture::new();
    let (p, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("open");
    assert_eq!(source, IndexSource::Built);
    let first = ask(&p, &q("retry_loop"));
    assert!(p.stats().bytes_on_disk > 0);
    drop(p);
    let (p2, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("reopen");
    assert_eq!(source, IndexSource::Loaded);
    assert_eq!(
        ask(&p2, &q("retry_loop")),
        first,
        "the loaded index answers exactly as the built one"
    );
    let report = p2.refresh().expect("refresh");
    assert!(!report.changed_anything(), "{report:?}");
    assert_eq!(report.unchanged, crate::common::fixture_files().len());
}

#[test]
fn refresh_reindexes_only_changed_content() {
    let f = Fixture::new();
    let p = f.open();
    // Same bytes, new mtime: re-hashed, not re-chunked.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(f.path("src/net.rs"))
        .and_then(|fh| fh.set_modified(later))
        .expect("touch");
    let report = p.refresh().expect("refresh");
    assert_eq!(
        (report.touched, report.changed, report.added, report.removed),
        (1, 0, 0, 0),
        "{report:?}"
    );

    f.write(
        "src/config.rs",
        &format!(
            "{}\npub fn ocelot_new_fn() {{}}\n",
            crate::common::CONFIG_RS
        ),
    );
    let report = p.refresh().expect("refresh");
    assert_eq!(
        (report.changed, report.added, report.removed),
        (1, 0, 0),
        "{report:?}"
    );
    assert!(crate::common::find(
        &ask(&p, &q("ocelot_new_fn")),
        "src/config.rs#config::ocelot_new_fn"
    )
    .is_some());
}

#[test]
fn deletes_and_renames_are_reflected_and_persisted() {
    let f = Fixture::new();
    let p = f.open();
    std::fs::remove_file(f.path("go/scheduler.go")).expect("rm");
    std::fs::create_dir_all(f.path("lib")).expect("mkdir");
    std::fs::rename(
        f.path("java/com/example/EmailValidator.java"),
        f.path("lib/EmailValidator.java"),
    )
    .expect("mv");
    let report = p.refresh().expect("refresh");
    assert_eq!((report.removed, report.added), (2, 1), "{report:?}");
    let check = |p: &WorkspaceProvider| {
        let r = ask(p, &q("ScheduleNightlyBackup isValidEmail"));
        let ids = crate::common::ids(&r);
        assert!(
            !ids.iter()
                .any(|i| i.starts_with("go/") || i.starts_with("java/")),
            "{ids:?}"
        );
        assert!(
            ids.contains(&"lib/EmailValidator.java#EmailValidator.isValidEmail"),
            "{ids:?}"
        );
    };
    check(&p);
    drop(p);
    // The journal carried the changes: a fresh open sees them without a refresh.
    let (p2, source) = WorkspaceProvider::open(f.dir.path(), f.options()).expect("reopen");
    assert_eq!(source, IndexSource::Loaded);
    check(&p2);
}
