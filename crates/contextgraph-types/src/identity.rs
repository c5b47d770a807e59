//! Frame identity (A1, D2): the spine shared by deterministic composition,
//! usage reports and verification.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// `(provider_id, frame_id, content_digest)`: the identity of one frame's exact bytes.
///
/// Canonical order is provider id, then frame id, then digest, with an
/// absent digest before a present one (`Option`'s natural order), which is
/// what the derived `Ord` gives because of the member order below.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FrameId {
    /// The provider that served the frame.
    pub provider_id: String,
    /// The provider-scoped frame id.
    pub frame_id: String,
    /// The frame's content digest, when it declared one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_digest: Option<String>,
}

impl FrameId {
    /// Build an identity.
    pub fn new(
        provider_id: impl Into<String>,
        frame_id: impl Into<String>,
        content_digest: Option<String>,
    ) -> Self {
        FrameId {
            provider_id: provider_id.into(),
            frame_id: frame_id.into(),
            content_digest,
        }
    }

    /// Canonical comparison (same as `Ord`), spelled out for readers of composition code.
    pub fn canonical_cmp(&self, other: &FrameId) -> Ordering {
        self.cmp(other)
    }

    /// Whether this identity can be revalidated with `verify` (V1): only
    /// digest-carrying identities can; the others are re-queried.
    pub fn is_verifiable(&self) -> bool {
        self.content_digest.is_some()
    }
}

impl fmt::Display for FrameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider_id, self.frame_id)?;
        if let Some(d) = &self.content_digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_order_is_provider_then_frame_then_digest_absent_first() {
        let mut ids = [
            FrameId::new("b", "1", None),
            FrameId::new("a", "2", Some("sha256:bb".into())),
            FrameId::new("a", "2", None),
            FrameId::new("a", "2", Some("sha256:aa".into())),
            FrameId::new("a", "10", None),
        ];
        ids.sort();
        let got: Vec<String> = ids.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            ["a/10", "a/2", "a/2@sha256:aa", "a/2@sha256:bb", "b/1"]
        );
    }
}
