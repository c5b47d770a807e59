//! F5 against the disk: every `file` provenance digest served on the main
//! connection is recomputed from the bytes its `uri` + `range` address now,
//! with the SDK's own `file_uri_to_path`, `read_range` and SHA-256, so the
//! suite and providers agree on which bytes a range means.
//!
//! The suite reads only files the provider itself named, only local
//! `file:` URIs, and at most [`MAX_FILE_BYTES`] of each.

use std::collections::BTreeSet;
use std::io::Read;

use contextgraph_provider_sdk::{file_uri_to_path, read_range, sha256_digest};
use contextgraph_types::LineRange;

use super::{Evidence, Main, Outcome};

/// Largest file re-read (bigger ones are reported as not verifiable).
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) fn file_provenance(m: &mut Main<'_>) -> Outcome {
    let frames = m.distinct_frames();
    if frames.is_empty() {
        return match m.base_frames() {
            Err(o) => o,
            Ok(_) => Outcome::skipped("no frames were served"),
        };
    }
    let mut e = Evidence::default();
    let mut seen = BTreeSet::new();
    let (mut verified, mut unverifiable) = (0usize, 0usize);
    for frame in frames {
        for p in frame.file_provenance() {
            let (Some(uri), Some(digest)) = (p.uri.as_deref(), p.digest.as_deref()) else {
                // A file entry without uri or digest is an F5 grammar
                // violation, reported by frame-validity.
                continue;
            };
            if !seen.insert((uri, p.range.as_deref(), digest)) {
                continue;
            }
            let at = match &p.range {
                Some(r) => format!("{uri} {r}"),
                None => uri.to_owned(),
            };
            let path = match file_uri_to_path(uri) {
                Ok(path) => path,
                Err(err) => {
                    unverifiable += 1;
                    e.note(format!(
                        "frame {:?}: {at} cannot be re-read here ({err})",
                        frame.id
                    ));
                    continue;
                }
            };
            let bytes = match read_bounded(&path) {
                Ok(b) => b,
                Err(err) => {
                    e.fail(format!(
                        "frame {:?}: {at} names {} but it cannot be read ({err}); file provenance must address bytes that exist at retrieval time",
                        frame.id,
                        path.display()
                    ));
                    continue;
                }
            };
            let addressed = match p.range.as_deref() {
                None => Some(&bytes[..]),
                Some(text) => match LineRange::parse(text) {
                    Some(range) => read_range(&bytes, range),
                    None => continue, // malformed range: frame-validity reports it
                },
            };
            let Some(addressed) = addressed else {
                e.fail(format!(
                    "frame {:?}: {at} reaches past the end of the file; a digest must cover exactly the bytes the range names",
                    frame.id
                ));
                continue;
            };
            let actual = sha256_digest(addressed);
            verified += 1;
            if actual != digest {
                e.fail(format!(
                    "frame {:?}: {at} has digest {digest} but its {} bytes on disk hash to {actual}",
                    frame.id,
                    addressed.len()
                ));
            }
        }
    }
    if verified == 0 && !e.failed() {
        return if unverifiable == 0 {
            Outcome::not_applicable("no frame carries file provenance with a digest")
        } else {
            Outcome::skipped(format!(
                "{unverifiable} file provenance entr(ies), none of them readable from this machine"
            ))
        };
    }
    e.note(format!(
        "{verified} file provenance digest(s) re-read from disk and re-hashed"
    ));
    e.finish()
}

fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than the suite's {MAX_FILE_BYTES}-byte re-read limit"
        )));
    }
    Ok(bytes)
}
