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
