//! Verify (V1–V4): re-hash the current bytes of a frame's region and answer
//! valid, stale with the replacement digest, or gone.

use crate::common::{ask, q, Fixture};
use contextgraph_provider_sdk::{audit_verdicts, sha256_digest, Provider};
use contextgraph_types::{FrameId, Verdict, VerifyRequest};

fn verdict(p: &contextgraph_provider_workspace::WorkspaceProvider, id: &FrameId) -> Verdict {
    let response = p.verify(&VerifyRequest {
        frames: vec![id.clone()],
    });
    assert!(audit_verdicts(&response).is_empty());
    assert_eq!(response.verdicts.len(), 1);
    assert_eq!(
        &response.verdicts[0].frame, id,
        "verdicts echo the identity"
    );
    response.verdicts[0].verdict.clone()
}

#[test]
fn verify_valid_stale_and_gone() {
    let f = Fixture::new();
    let p = f.open();
    let r = ask(&p, &q("parse_timeout"));
    let frame = crate::common::find(&r, "src/config.rs#config::parse_timeout").expect("frame");
    let id = frame.frame_id(contextgraph_provider_workspace::PROVIDER_NAME);
    assert_eq!(verdict(&p, &id), Verdict::Valid);

    // An edit elsewhere in the file leaves the region's bytes unchanged: still valid.
    f.write(
        "src/config.rs",
        &format!("// header comment\n{}", crate::common::CONFIG_RS),
    );
    assert_eq!(verdict(&p, &id), Verdict::Valid);

    // An edit inside the region: stale, with the digest of the bytes served now.
    let edited = crate::common::CONFIG_RS.replace("30_000", "60_000");
    f.write("src/config.rs", &edited);
    let expected = {
        let start = edited.find("/// Parse the timeout").expect("doc");
        sha256_digest(&edited.as_bytes()[start..])
    };
    assert_eq!(
        verdict(&p, &id),
        Verdict::Stale {
            replacement_digest: Some(expected)
        }
    );

    // The definition removed: gone. The file removed: gone.
    f.write("src/config.rs", "pub struct Settings;\n");
    assert_eq!(verdict(&p, &id), Verdict::Gone);
    std::fs::remove_file(f.path("src/config.rs")).expect("rm");
    assert_eq!(verdict(&p, &id), Verdict::Gone);
}

#[test]
fn verify_never_validates_a_digest_it_does_not_serve() {
    let f = Fixture::new();
    let p = f.open();
    let wrong = FrameId::new(
        contextgraph_provider_workspace::PROVIDER_NAME,
        "src/config.rs#config::parse_timeout",
        Some(sha256_digest(b"something else")),
    );
    assert!(matches!(verdict(&p, &wrong), Verdict::Stale { .. }));
    let no_digest = FrameId::new(
        contextgraph_provider_workspace::PROVIDER_NAME,
        "src/config.rs#config::parse_timeout",
        None,
    );
    assert_eq!(
        verdict(&p, &no_digest),
        Verdict::Unknown,
        "V1: nothing to compare"
    );
    let escape = FrameId::new(
        contextgraph_provider_workspace::PROVIDER_NAME,
        "../etc/passwd#x",
        Some(sha256_digest(b"")),
    );
    assert_eq!(verdict(&p, &escape), Verdict::Gone);
}

/// `provider_id` is the host's label for this provider (a `cgp.toml` table
/// name, another implementation's routing key), which the provider cannot
/// know: verify judges by frame id and digest and echoes the label back.
#[test]
fn verify_judges_a_host_key_by_frame_id_and_digest() {
    let f = Fixture::new();
    let p = f.open();
    let r = ask(&p, &q("parse_timeout"));
    let frame = crate::common::find(&r, "src/config.rs#config::parse_timeout").expect("frame");
    let id = frame.frame_id("workspace-b");
    assert_eq!(verdict(&p, &id), Verdict::Valid);

    let edited = crate::common::CONFIG_RS.replace("30_000", "60_000");
    f.write("src/config.rs", &edited);
    assert!(matches!(verdict(&p, &id), Verdict::Stale { .. }));

    std::fs::remove_file(f.path("src/config.rs")).expect("rm");
    assert_eq!(verdict(&p, &id), Verdict::Gone);
}

#[cfg(unix)]
#[test]
fn verify_does_not_follow_a_symlinked_directory_out_of_the_root() {
    let outside = tempfile::tempdir().expect("outside");
    let secret = "pub fn outside() {}\n";
    std::fs::write(outside.path().join("x.rs"), secret).expect("write");
    let f = Fixture::new();
    std::os::unix::fs::symlink(outside.path(), f.path("escape")).expect("symlink");
    let p = f.open();
    let id = FrameId::new(
        contextgraph_provider_workspace::PROVIDER_NAME,
        "escape/x.rs#x::outside",
        Some(sha256_digest(secret.as_bytes())),
    );
    assert_eq!(
        verdict(&p, &id),
        Verdict::Gone,
        "a file outside the root is never confirmed"
    );
}

/// Every frame the provider serves for `src/net.rs`, as held identities.
fn net_rs_ids(p: &contextgraph_provider_workspace::WorkspaceProvider) -> Vec<FrameId> {
    let r = ask(p, &q("retry loop connect once NetError new message"));
    let ids: Vec<FrameId> = r
        .frames
        .iter()
        .filter(|f| f.id.starts_with("src/net.rs#"))
        .map(|f| f.frame_id(contextgraph_provider_workspace::PROVIDER_NAME))
        .collect();
    assert!(ids.len() >= 3, "several frames of one file: {ids:?}");
    ids
}

fn verdicts(
    p: &contextgraph_provider_workspace::WorkspaceProvider,
    ids: &[FrameId],
) -> Vec<Verdict> {
    let response = p.verify(&VerifyRequest {
        frames: ids.to_vec(),
    });
    assert!(audit_verdicts(&response).is_empty());
    response.verdicts.into_iter().map(|v| v.verdict).collect()
}

/// A session revalidates many frames of few files: one request reads each
/// file once, however many of its frames it names.
#[test]
fn verify_reads_a_file_once_for_all_its_frames() {
    let f = Fixture::new();
    let p = f.open();
    let ids = net_rs_ids(&p);
    // Just written: its stamp is not settled, so the bytes are read and
    // hashed; they are the indexed bytes, so nothing is re-chunked.
    let (before, chunked) = (p.verify_file_reads(), p.verify_file_chunkings());
    assert!(verdicts(&p, &ids).iter().all(|v| *v == Verdict::Valid));
    assert_eq!(
        p.verify_file_chunkings(),
        chunked,
        "the index holds these bytes"
    );
    assert_eq!(
        p.verify_file_reads() - before,
        1,
        "one read for {} frames",
        ids.len()
    );

    // An edit inside one frame: that frame stale, the others valid, still one read.
    let edited = crate::common::NET_RS.replace("peer unreachable", "peer not reachable");
    f.write("src/net.rs", &edited);
    let (before, chunked) = (p.verify_file_reads(), p.verify_file_chunkings());
    let now = verdicts(&p, &ids);
    assert_eq!(p.verify_file_reads() - before, 1);
    assert_eq!(
        p.verify_file_chunkings() - chunked,
        1,
        "not indexed yet: chunked once"
    );
    let stale = now
        .iter()
        .filter(|v| matches!(v, Verdict::Stale { .. }))
        .count();
    assert_eq!(stale, 1, "{now:?}");
    assert_eq!(
        now.iter().filter(|v| **v == Verdict::Valid).count(),
        ids.len() - 1
    );

    // The file deleted: every frame gone.
    std::fs::remove_file(f.path("src/net.rs")).expect("rm");
    assert!(verdicts(&p, &ids).iter().all(|v| *v == Verdict::Gone));
}

/// A file whose settled stamp is unchanged since a refresh read it is
/// answered from the index's digests without reading it; any write moves
/// its stamp, including an edit that keeps the size and restores the
/// modification time (the change time still moves), and is then read and
/// judged on its bytes.
#[test]
fn verify_answers_an_unchanged_file_from_the_index_and_reads_a_changed_one() {
    let f = Fixture::new();
    let p = f.open();
    let ids = net_rs_ids(&p);
    // Stamps within the racy window of the refresh that saw them are not
    // trusted: wait it out, then a refresh re-reads and settles them.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    p.refresh().expect("refresh");
    let before = p.verify_file_reads();
    assert!(verdicts(&p, &ids).iter().all(|v| *v == Verdict::Valid));
    assert_eq!(p.verify_file_reads(), before, "proven unchanged: not read");

    // Same size, modification time put back: only the change time moved.
    let path = f.path("src/net.rs");
    let mtime = std::fs::metadata(&path)
        .expect("meta")
        .modified()
        .expect("mtime");
    let edited = crate::common::NET_RS.replace("peer unreachable", "peer UNREACHABLE");
    assert_eq!(edited.len(), crate::common::NET_RS.len());
    f.write("src/net.rs", &edited);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(mtime))
        .expect("restore mtime");
    let (before, chunked) = (p.verify_file_reads(), p.verify_file_chunkings());
    let now = verdicts(&p, &ids);
    assert_eq!(
        p.verify_file_reads() - before,
        1,
        "a moved stamp proves nothing: read"
    );
    assert_eq!(
        p.verify_file_chunkings() - chunked,
        1,
        "other bytes than indexed"
    );
    assert_eq!(
        now.iter()
            .filter(|v| matches!(v, Verdict::Stale { .. }))
            .count(),
        1,
        "the edited frame is caught: {now:?}"
    );
    // Before the index catches up, it still reads (the index is behind).
    assert_eq!(verdicts(&p, &ids), now);
    p.refresh().expect("refresh");
    let after = verdicts(&p, &ids);
    assert_eq!(after, now, "the same verdicts once re-indexed");
}

/// An index loaded without the tree that saw its files read (`tree.bin`
/// lost) keeps files whose size and modification time match, on those
/// alone: an edit that restored both is not proven absent. Such files are
/// read by verify, and hashed again by the next refresh, never confirmed
/// from their stale index entry.
#[test]
fn verify_reads_files_an_index_kept_without_their_tree() {
    let f = Fixture::new();
    let p = f.open();
    let ids = net_rs_ids(&p);
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    p.refresh().expect("refresh");
    assert!(verdicts(&p, &ids).iter().all(|v| *v == Verdict::Valid));
    drop(p);
    let trees: Vec<_> = walk_files(f.cache.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "tree.bin"))
        .collect();
    assert_eq!(trees.len(), 1, "one saved tree");
    std::fs::remove_file(&trees[0]).expect("rm tree");

    let path = f.path("src/net.rs");
    let mtime = std::fs::metadata(&path)
        .expect("meta")
        .modified()
        .expect("mtime");
    let edited = crate::common::NET_RS.replace("peer unreachable", "peer UNREACHABLE");
    f.write("src/net.rs", &edited);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(mtime))
        .expect("restore mtime");
    std::thread::sleep(std::time::Duration::from_millis(2_100));

    let p = f.open();
    p.refresh()
        .expect("refresh: a full walk, no tree to compare with");
    let (before, chunked) = (p.verify_file_reads(), p.verify_file_chunkings());
    let now = verdicts(&p, &ids);
    assert_eq!(p.verify_file_reads() - before, 1, "not proven: read");
    assert_eq!(p.verify_file_chunkings() - chunked, 1, "the index is stale");
    assert_eq!(
        now.iter()
            .filter(|v| matches!(v, Verdict::Stale { .. }))
            .count(),
        1,
        "the edit is caught: {now:?}"
    );
    // The next refresh hashes it again and catches up with the edit.
    let report = p.refresh().expect("refresh");
    assert_eq!(report.changed, 1, "{report:?}");
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
