//! [`FrameBuilder`]: frames whose cost and digest cannot lie.
//!
//! A host audits every answer and drops a provider's frames when a declared
//! `token_cost` (B3) or `content_digest` (D1) does not match the content. The
//! builder therefore never lets an author type those two numbers: they are
//! computed from the content in [`build`](FrameBuilder::build), after every
//! other setter has run, so they always describe the bytes that are sent.

use contextgraph_types::{
    token_cost_for, ContentFidelity, ContextFrame, FrameKind, Provenance, Relation, Timestamp,
    Violation,
};

use crate::digest::Sha256Hasher;

/// Builds a `full` frame from id, kind, title and content.
///
/// What it does for you:
/// - `token_cost` = `ceil(utf8_bytes(content) / 4)` (B3) and
///   `content_digest` = SHA-256 of exactly the content bytes (D1), both
///   computed at [`build`](Self::build);
/// - `score` is clamped into [0, 1], NaN becomes 0 (F1);
/// - `citation_label` defaults to the title (F3: hosts cite by label, and a
///   frame without one is rejected), so set a better one when you have it,
///   e.g. `retry.md L1-20`;
/// - timestamps are taken as [`Timestamp`]s, so they are always in the exact
///   F4 wire form.
///
/// ```
/// use contextgraph_provider_sdk::FrameBuilder;
/// use contextgraph_types::FrameKind;
///
/// let frame = FrameBuilder::new("doc:retry", FrameKind::Doc, "Retry policy", "max_attempts bounds the tries")
///     .uri("file:///repo/docs/retry.md")
///     .score(0.92)
///     .citation_label("retry.md L1-20")
///     .build();
/// assert_eq!(frame.token_cost, 8); // 29 bytes -> ceil(29 / 4)
/// assert!(frame.content_digest.as_deref().is_some_and(|d| d.starts_with("sha256:")));
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct FrameBuilder {
    frame: ContextFrame,
}

impl FrameBuilder {
    /// A builder for a `full` frame carrying `content` inline.
    pub fn new(
        id: impl Into<String>,
        kind: FrameKind,
        title: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        FrameBuilder {
            frame: ContextFrame::new(id, kind, title, content),
        }
    }

    /// The source resource (e.g. a `file://` URI from
    /// [`path_to_file_uri`](crate::path_to_file_uri)). A `graph` provider's
    /// anchoring (G4) compares it with the query's anchors exactly.
    pub fn uri(mut self, uri: impl Into<String>) -> Self {
        self.frame.uri = Some(uri.into());
        self
    }

    /// Relevance, clamped into [0, 1]; NaN becomes 0 (F1). A clamped score is
    /// still an honest ranking signal, whereas an out-of-range one gets every
    /// frame of the answer dropped by the host.
    pub fn score(mut self, score: f32) -> Self {
        self.frame.score = clamp_score(score);
        self
    }

    /// The label hosts cite the frame by (F3). Blank labels are ignored so
    /// the title default stays in force.
    pub fn citation_label(mut self, label: impl Into<String>) -> Self {
        let label = label.into();
        if !label.trim().is_empty() {
            self.frame.citation_label = Some(label);
        }
        self
    }

    /// When the provider recorded this content (F4; compared with `as_of`).
    pub fn recorded_at(mut self, at: Timestamp) -> Self {
        self.frame.recorded_at = Some(at.to_wire());
        self
    }

    /// Start of validity (F4; compared with `as_of`).
    pub fn valid_from(mut self, at: Timestamp) -> Self {
        self.frame.valid_from = Some(at.to_wire());
        self
    }

    /// End of validity (F4).
    pub fn valid_to(mut self, at: Timestamp) -> Self {
        self.frame.valid_to = Some(at.to_wire());
        self
    }

    /// Add one provenance entry, e.g. the one
    /// [`file_excerpt`](crate::file_excerpt) returns.
    pub fn provenance(mut self, provenance: Provenance) -> Self {
        self.frame.provenance.push(provenance);
        self
    }

    /// Add one graph edge (G1 wants a non-empty `display_name`, G2 a
    /// non-empty `target_uri`).
    pub fn relation(
        mut self,
        rel: impl Into<String>,
        target_uri: impl Into<String>,
        display_name: impl Into<String>,
    ) -> Self {
        self.frame.relations.push(Relation {
            rel: rel.into(),
            target_uri: target_uri.into(),
            display_name: Some(display_name.into()),
        });
        self
    }

    /// Add several graph edges.
    pub fn relations(mut self, relations: impl IntoIterator<Item = Relation>) -> Self {
        self.frame.relations.extend(relations);
        self
    }

    /// Fidelity of the inline content relative to its source.
    pub fn content_fidelity(mut self, fidelity: ContentFidelity) -> Self {
        self.frame.content_fidelity = Some(fidelity);
        self
    }

    /// The frame, with `token_cost` (B3) and `content_digest` (D1) computed
    /// from its content and the citation label defaulted to the title.
    pub fn build(mut self) -> ContextFrame {
        let f = &mut self.frame;
        f.token_cost = token_cost_for(f.content.as_deref());
        f.content_digest = f
            .content
            .as_deref()
            .map(|c| crate::digest_memo::digest(c.as_bytes()));
        if f.citation_label.is_none() && !f.title.trim().is_empty() {
            f.citation_label = Some(f.title.clone());
        }
        self.frame
    }

    /// [`build`](Self::build), then self-check the frame against every rule a
    /// frame can be checked on alone (digests recomputed). What remains to
    /// get wrong is what the builder cannot see: an empty id or title, a
    /// relation without a label, a provenance entry without a digest.
    pub fn try_build(self) -> Result<ContextFrame, Vec<Violation>> {
        let frame = self.build();
        let violations = frame.validate_with(&Sha256Hasher);
        if violations.is_empty() {
            Ok(frame)
        } else {
            Err(violations)
        }
    }
}

/// F1: `score` clamped into [0, 1], NaN mapped to 0.
pub fn clamp_score(score: f32) -> f32 {
    if score.is_nan() {
        0.0
    } else {
        score.clamp(0.0, 1.0)
    }
}
