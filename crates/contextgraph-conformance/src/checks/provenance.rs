//! F5 against the disk: every `file` provenance digest served on the main
//! connection is recomputed from the bytes its `uri` + `range` address now,
//! with the SDK's own `file_uri_to_path`, `read_range` and SHA-256, so the
//! suite and providers agree on which bytes a range means.
//!
//! The suite reads only files the provider itself named, only local
//! `file:` URIs, and at most [`MAX_FILE_BYTES`] of each.
//!
//! Every entry is judged on its own, so one fault never hides another:
//! - a range that reaches past the end of the file is a *warning*, not a
//!   stop: the protocol says which lines a range names, not what a provider
//!   must do at the end of a file, and the bytes that exist (the range
//!   clipped to the file) are re-hashed and compared like any other;
//! - a single-line range written `L<n>` (not `L<n>-<n>`) breaks the range
//!   grammar, which frame-validity reports; here it is read as `L<n>-<n>` so
//!   its digest is still checked.

use std::collections::BTreeSet;
use std::io::Read;

use contextgraph_provider_sdk::{count_lines, file_uri_to_path, read_range, sha256_digest};
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
                None => &bytes[..],
                Some(text) => {
                    let Some(range) = LineRange::parse(text).or_else(|| single_line(text)) else {
                        continue; // malformed range: frame-validity reports it
                    };
                    match read_range(&bytes, range) {
                        Some(exact) => exact,
                        None => {
                            let (clipped, lines) = clip(&bytes, range);
                            e.warn(format!(
                                "frame {:?}: {at} reaches past the end of the file ({lines} line(s)); the {} byte(s) that exist were re-hashed. Clamp ranges to the file so the range names exactly the bytes hashed",
                                frame.id,
                                clipped.len()
                            ));
                            clipped
                        }
                    }
                }
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

/// `L<n>`, a single-line range in the short form some providers write, read
/// as `L<n>-<n>`.
fn single_line(text: &str) -> Option<LineRange> {
    let digits = text.strip_prefix('L')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    LineRange::new(n, n)
}

/// The bytes of `range` clipped to the file: lines `start..=last line`
/// (empty when the range starts past the end), and the file's line count.
fn clip(bytes: &[u8], range: LineRange) -> (&[u8], usize) {
    let lines = count_lines(bytes);
    let last = u32::try_from(lines).unwrap_or(u32::MAX);
    let clipped = LineRange::new(range.start, range.end.min(last))
        .and_then(|r| read_range(bytes, r))
        .unwrap_or(&[]);
    (clipped, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_single_line_ranges_are_read_as_one_line() {
        assert_eq!(single_line("L10"), LineRange::new(10, 10));
        for bad in ["L", "L0", "10", "L1-2", "Lx", "L-1"] {
            assert_eq!(single_line(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_range_past_the_end_is_clipped_to_the_lines_that_exist() {
        let file = b"one\ntwo\nthree\n";
        let r = |a, b| LineRange::new(a, b).unwrap();
        assert_eq!(clip(file, r(2, 20)), (&b"two\nthree\n"[..], 3));
        assert_eq!(clip(file, r(4, 9)), (&b""[..], 3));
        assert_eq!(clip(b"", r(1, 1)), (&b""[..], 0));
    }
}
