//! `as_of`: frames carry `recorded_at`/`valid_from` from the index, and
//! nothing recorded after the pinned instant is returned.

use crate::common::{ask, q, Fixture};
use contextgraph_types::Timestamp;

#[test]
fn as_of_excludes_content_recorded_after_the_pin() {
    let f = Fixture::new();
    let p = f.open();
    let pin = f.now();
    f.tick(3600);
    f.write(
        "src/late.rs",
        "/// Added after the pin.\npub fn okapi_late_addition() {}\n",
    );
    p.refresh().expect("refresh");

    let unpinned = ask(&p, &q("okapi_late_addition"));
    let late = crate::common::find(&unpinned, "src/late.rs#late::okapi_late_addition")
        .expect("late frame without pin");
    let recorded = Timestamp::parse(late.recorded_at.as_deref().expect("recorded_at")).expect("F4");
    assert!(recorded > pin);

    let mut pinned = q("okapi_late_addition");
    pinned.as_of = Some(pin.to_wire());
    let r = ask(&p, &pinned);
    assert!(
        r.frames.iter().all(|fr| !fr.id.starts_with("src/late.rs")),
        "{:?}",
        crate::common::ids(&r)
    );
    for fr in &r.frames {
        let at = Timestamp::parse(fr.recorded_at.as_deref().expect("recorded_at")).expect("F4");
        assert!(at <= pin);
    }
}

#[test]
fn unchanged_chunks_keep_their_recorded_at_across_edits_elsewhere_in_the_file() {
    let f = Fixture::new();
    let p = f.open();
    let before = ask(&p, &q("parse_timeout"));
    let original = crate::common::find(&before, "src/config.rs#config::parse_timeout")
        .expect("frame")
        .recorded_at
        .clone();
    f.tick(60);
    f.write(
        "src/config.rs",
        &format!(
            "{}\n/// New.\npub fn added_later() {{}}\n",
            crate::common::CONFIG_RS
        ),
    );
    p.refresh().expect("refresh");
    let after = ask(&p, &q("parse_timeout"));
    let kept = crate::common::find(&after, "src/config.rs#config::parse_timeout")
        .expect("frame")
        .recorded_at
        .clone();
    assert_eq!(original, kept);
    let mut pinned = q("parse_timeout added_later");
    pinned.as_of = original.clone();
    let r = ask(&p, &pinned);
    assert!(crate::common::find(&r, "src/config.rs#config::parse_timeout").is_some());
    assert!(crate::common::find(&r, "src/config.rs#config::added_later").is_none());
}
