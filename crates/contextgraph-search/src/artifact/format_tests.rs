use super::*;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn manifest() -> Manifest {
    Manifest {
        index_format: crate::store::FORMAT_VERSION,
        created_by: "test".into(),
        commit: Commit::Git {
            id: COMMIT.into(),
            head: Some("refs/heads/main".into()),
        },
        built_from: "/src/project".into(),
        files: 3,
        chunks: 7,
        model: Some("model-fingerprint".into()),
        members: Vec::new(),
    }
}

/// A small artifact on disk and its bytes.
fn written(dir: &Path) -> (PathBuf, Vec<u8>) {
    let path = dir.join("a.cgpidx");
    let mut m = manifest();
    write_artifact(
        &path,
        &mut m,
        &[
            (INDEX_MEMBER, b"snapshot bytes"),
            (VECTORS_MEMBER, b"vector rows"),
        ],
    )
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
fn an_artifact_reads_back_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = written(dir.path());
    let file = read_artifact(&path).unwrap();
    let mut expected = manifest();
    expected.members = file.manifest.members.clone();
    assert_eq!(file.manifest, expected);
    assert_eq!(file.member(INDEX_MEMBER), Some(&b"snapshot bytes"[..]));
    assert_eq!(file.member(VECTORS_MEMBER), Some(&b"vector rows"[..]));
    assert_eq!(file.id_hex().len(), 64);
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() == 1,
        "no temporary file is left beside it"
    );
}

#[test]
fn every_flipped_byte_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = written(dir.path());
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0x01;
        std::fs::write(&path, &bad).unwrap();
        let e = read_artifact(&path).expect_err(&format!("byte {at} flipped was accepted"));
        assert!(
            matches!(
                e,
                ArtifactError::Corrupt { .. }
                    | ArtifactError::NotAnArtifact { .. }
                    | ArtifactError::Version { .. }
            ),
            "byte {at}: {e}"
        );
        assert!(e.to_string().contains("a.cgpidx"), "names the file: {e}");
    }
}

#[test]
fn every_truncation_and_an_appended_byte_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = written(dir.path());
    for len in 0..bytes.len() {
        std::fs::write(&path, &bytes[..len]).unwrap();
        assert!(
            read_artifact(&path).is_err(),
            "truncated to {len} bytes was accepted"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    std::fs::write(&path, &longer).unwrap();
    let e = read_artifact(&path).unwrap_err().to_string();
    assert!(e.contains("members of"), "{e}");
}

/// A header and manifest of our making, checksummed, so the checks past
/// the digest are what refuses them.
fn forged(dir: &Path, manifest_bytes: &[u8], tail: &[u8]) -> PathBuf {
    let path = dir.join("forged.cgpidx");
    let mut out = Vec::new();
    out.extend_from_slice(ARTIFACT_MAGIC);
    out.extend_from_slice(&ARTIFACT_VERSION.to_le_bytes());
    out.extend_from_slice(&(manifest_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(manifest_bytes);
    out.extend_from_slice(&sha256(manifest_bytes));
    out.extend_from_slice(tail);
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn lengths_from_the_file_are_bounded_before_anything_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    // A manifest length of 4 GiB in a file of a few bytes.
    let path = dir.path().join("huge.cgpidx");
    let mut out = ARTIFACT_MAGIC.to_vec();
    out.extend_from_slice(&ARTIFACT_VERSION.to_le_bytes());
    out.extend_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&path, &out).unwrap();
    let e = read_artifact(&path).unwrap_err().to_string();
    assert!(e.contains("over the"), "{e}");
    // A string length past the manifest's end.
    let mut m = crate::store::FORMAT_VERSION.to_le_bytes().to_vec();
    m.extend_from_slice(&u32::MAX.to_le_bytes());
    let e = read_artifact(&forged(dir.path(), &m, b""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("over the 4096-byte limit"), "{e}");
    // Members whose lengths overflow or exceed the file.
    let mut good = manifest();
    good.model = None;
    good.members = vec![Member {
        name: INDEX_MEMBER.into(),
        len: u64::MAX,
        sha256: [0; 32],
    }];
    let e = read_artifact(&forged(dir.path(), &encode_manifest(&good), b"abc"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("members of"), "{e}");
    good.members.push(Member {
        name: VECTORS_MEMBER.into(),
        len: 2,
        sha256: [0; 32],
    });
    good.model = Some("m".into());
    let e = read_artifact(&forged(dir.path(), &encode_manifest(&good), b"abc"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("overflow"), "{e}");
}

#[test]
fn a_manifest_that_does_not_hold_together_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let member = |name: &str| Member {
        name: name.into(),
        len: 0,
        sha256: sha256(b""),
    };
    let cases: Vec<(Manifest, &str)> = vec![
        (
            Manifest {
                members: vec![member(INDEX_MEMBER), member("secrets")],
                ..manifest()
            },
            "unknown member",
        ),
        (
            Manifest {
                members: vec![member(INDEX_MEMBER), member(INDEX_MEMBER)],
                model: None,
                ..manifest()
            },
            "twice",
        ),
        (
            Manifest {
                members: vec![member(VECTORS_MEMBER)],
                ..manifest()
            },
            "no index member",
        ),
        (
            Manifest {
                members: vec![member(INDEX_MEMBER)],
                ..manifest()
            },
            "without vectors",
        ),
        (
            Manifest {
                members: vec![member(INDEX_MEMBER)],
                model: None,
                commit: Commit::Git {
                    id: "../../etc".into(),
                    head: None,
                },
                ..manifest()
            },
            "not 40 or 64 hex digits",
        ),
    ];
    for (m, why) in cases {
        let e = read_artifact(&forged(dir.path(), &encode_manifest(&m), b""))
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{why}: {e}");
    }
    let mut extra = encode_manifest(&Manifest {
        members: vec![member(INDEX_MEMBER)],
        model: None,
        ..manifest()
    });
    extra.push(7);
    let e = read_artifact(&forged(dir.path(), &extra, b""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("after the manifest's last field"), "{e}");
}

#[test]
fn another_version_is_refused_and_says_to_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut bytes) = written(dir.path());
    bytes[8..12].copy_from_slice(&(ARTIFACT_VERSION + 1).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let e = read_artifact(&path).unwrap_err();
    assert!(
        matches!(
            e,
            ArtifactError::Version {
                what: "artifact format",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("cgp index build"), "{e}");
    let m = Manifest {
        index_format: crate::store::FORMAT_VERSION - 1,
        members: vec![Member {
            name: INDEX_MEMBER.into(),
            len: 0,
            sha256: sha256(b""),
        }],
        model: None,
        ..manifest()
    };
    let e = read_artifact(&forged(dir.path(), &encode_manifest(&m), b"")).unwrap_err();
    assert!(
        matches!(
            e,
            ArtifactError::Version {
                what: "index format",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_file_that_is_not_an_artifact_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    for content in [&b""[..], b"CGP", b"not an artifact at all, just text"] {
        std::fs::write(&path, content).unwrap();
        let e = read_artifact(&path).unwrap_err();
        assert!(
            matches!(e, ArtifactError::NotAnArtifact { .. }),
            "{content:?}: {e}"
        );
    }
}
