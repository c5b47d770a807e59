//! The baseline faults a combined mode lays under its second fault
//! ([`Baseline`]): what other implementations do throughout their answers,
//! so a checker that stopped at the first problem would report the
//! combined mode exactly like the baseline alone.
//!
//! They are applied to every servable frame before scoring, so queries and
//! `verify` see the same frames: verify compares a presented digest with
//! the digest the provider *declares* now, as a provider that hashes its own
//! way does.

use contextgraph_types::{ContextFrame, LineRange};

use crate::corpus::WINDOW_LINES;
pub use crate::mode::Baseline;

/// The digest `placeholder-digest` declares for every frame: well-formed,
/// the digest of nothing it serves (D1).
pub const PLACEHOLDER_DIGEST: &str =
    "sha256:1111111111111111111111111111111111111111111111111111111111111111";

/// Apply `baseline` to every frame.
pub fn apply(baseline: Baseline, frames: &mut [ContextFrame]) {
    for frame in frames {
        match baseline {
            Baseline::PlaceholderDigest => {
                if frame.content_digest.is_some() {
                    frame.content_digest = Some(PLACEHOLDER_DIGEST.to_owned());
                }
            }
            Baseline::RangePastEnd => {
                for p in frame.provenance.iter_mut().filter(|p| p.is_file()) {
                    let Some(range) = p.range.as_deref().and_then(LineRange::parse) else {
                        continue;
                    };
                    // Only a file's last window is shorter than a full one:
                    // claiming a full window there reaches past the end,
                    // while the digest stays over the lines that exist.
                    if range.len() < WINDOW_LINES {
                        let end = range.start.saturating_add(WINDOW_LINES - 1);
                        if let Some(claimed) = LineRange::new(range.start, end) {
                            p.range = Some(claimed.to_string());
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_provider_sdk::FrameBuilder;
    use contextgraph_types::{FrameKind, Provenance};

    fn frame(range: &str) -> ContextFrame {
        FrameBuilder::new("f", FrameKind::Doc, "t", "text\n")
            .provenance(Provenance {
                kind: Provenance::FILE.to_owned(),
                uri: Some("file:///x".into()),
                range: Some(range.into()),
                digest: Some(PLACEHOLDER_DIGEST.into()),
                ..Provenance::default()
            })
            .build()
    }

    #[test]
    fn short_windows_claim_a_full_window_and_full_ones_stay() {
        let mut frames = [frame("L1-7"), frame("L1-20"), frame("L21-33")];
        apply(Baseline::RangePastEnd, &mut frames);
        let ranges: Vec<_> = frames
            .iter()
            .map(|f| f.provenance[0].range.clone().unwrap())
            .collect();
        assert_eq!(ranges, ["L1-20", "L1-20", "L21-40"]);
    }

    #[test]
    fn every_digest_becomes_the_placeholder() {
        let mut frames = [frame("L1-7")];
        assert_ne!(
            frames[0].content_digest.as_deref(),
            Some(PLACEHOLDER_DIGEST)
        );
        apply(Baseline::PlaceholderDigest, &mut frames);
        assert_eq!(
            frames[0].content_digest.as_deref(),
            Some(PLACEHOLDER_DIGEST)
        );
    }
}
