//! The context frame: the unit of exchange, and its parts.
//!
//! A frame is a structured record of relevance (`score`), cost
//! (`token_cost`), origin (`provenance`), validity in time and shape
//! (`representation`). Its `content` is untrusted data: a host quotes it and
//! never follows it (R3).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use crate::serde_util::{from_wire_str, null_as_default};

/// What a frame is. Closed within the `contextgraph/1` family, but a frame of
/// a kind this crate does not know still parses, as [`Other`](Self::Other),
/// so one such frame never makes the rest of a `frames` message unreadable
/// (U2). A host drops `Other` frames with a report.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    /// A region of a file.
    Snippet,
    /// A code definition.
    Symbol,
    /// An atomic statement.
    Fact,
    /// Prose documentation.
    Doc,
    /// A remembered item.
    Memory,
    /// An event in a history.
    Episode,
    /// A graph neighbourhood.
    Graph,
    /// A kind outside the known set, kept verbatim (U2).
    Other(String),
}

impl FrameKind {
    /// The seven kinds of the `contextgraph/1` family.
    pub const KNOWN: [FrameKind; 7] = [
        FrameKind::Snippet,
        FrameKind::Symbol,
        FrameKind::Fact,
        FrameKind::Doc,
        FrameKind::Memory,
        FrameKind::Episode,
        FrameKind::Graph,
    ];

    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            FrameKind::Snippet => "snippet",
            FrameKind::Symbol => "symbol",
            FrameKind::Fact => "fact",
            FrameKind::Doc => "doc",
            FrameKind::Memory => "memory",
            FrameKind::Episode => "episode",
            FrameKind::Graph => "graph",
            FrameKind::Other(s) => s,
        }
    }

    /// Parse a wire string; never fails (unknown strings become [`Other`](Self::Other)).
    pub fn from_wire(text: &str) -> Self {
        match text {
            "snippet" => FrameKind::Snippet,
            "symbol" => FrameKind::Symbol,
            "fact" => FrameKind::Fact,
            "doc" => FrameKind::Doc,
            "memory" => FrameKind::Memory,
            "episode" => FrameKind::Episode,
            "graph" => FrameKind::Graph,
            other => FrameKind::Other(other.to_owned()),
        }
    }

    /// Whether this is one of the seven known kinds.
    pub fn is_known(&self) -> bool {
        !matches!(self, FrameKind::Other(_))
    }
}

impl fmt::Display for FrameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for FrameKind {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(FrameKind::from_wire(s))
    }
}

impl Serialize for FrameKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FrameKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        from_wire_str(deserializer, FrameKind::from_wire)
    }
}

/// How a frame carries its content (P1–P4). Absent on the wire means `full`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Representation {
    /// The content itself, inline.
    #[default]
    Full,
    /// A transformed (distilled) rendering inline, plus a handle to the source.
    Compact,
    /// No inline content: only a handle and the source's hash.
    Reference,
}

impl Representation {
    /// Whether this is `full` (the wire omits it then).
    pub fn is_full(&self) -> bool {
        matches!(self, Representation::Full)
    }

    /// The wire string.
    pub fn as_str(&self) -> &'static str {
        match self {
            Representation::Full => "full",
            Representation::Compact => "compact",
            Representation::Reference => "reference",
        }
    }
}

impl fmt::Display for Representation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fidelity of carried content relative to its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentFidelity {
    /// Byte-identical to the source.
    Exact,
    /// Whitespace or encoding normalised.
    Normalized,
    /// Summarised.
    Summarized,
    /// Content omitted.
    Omitted,
}

/// Whether a consumer requires inline content or accepts a resolvable reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InlineContentRequirement {
    /// Inline content is required.
    Required,
    /// A resolvable reference is acceptable.
    ResolvableReferenceAllowed,
}

/// An opaque resolver handle for a compact or reference frame's source.
/// `uri` here is a handle, distinct from the frame's source `uri`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContentRef {
    /// The exact provider that returned the frame (where a resolve goes).
    pub provider_id: String,
    /// Opaque handle.
    pub uri: String,
    /// When the handle stops working (F4 timestamp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// How a compact frame rendered its source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Transform {
    /// e.g. `extractive_summary`, `outline`.
    pub method: String,
    /// Which implementation performed it.
    pub implementation: String,
    /// Its version.
    pub version: String,
}

/// One origin entry of a frame. The Rust field is `kind`; the wire name is `type`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Provenance {
    /// e.g. `file`, `derivation`, `episode`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Region of the resource, `L<start>-<end>` (1-based, inclusive lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// For `file`: `sha256:` + 64 lowercase hex over exactly the addressed bytes (F5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// How the content was obtained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Who obtained it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl Provenance {
    /// The provenance type every file-backed frame carries (F5).
    pub const FILE: &'static str = "file";

    /// Whether this entry is of type `file`.
    pub fn is_file(&self) -> bool {
        self.kind == Self::FILE
    }
}

/// A graph edge from the frame to another resource. The `rel` vocabulary is open.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Relation {
    /// e.g. `code.calls`, `code.imports`, `doc.documents`.
    pub rel: String,
    /// The target resource; non-empty (G2).
    pub target_uri: String,
    /// Human label of the target; required non-empty by G1. Optional in the
    /// type so that a frame lacking it still parses and can be reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// A frame's embedding. The vector itself may be elided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameEmbedding {
    /// Embedding space identity (E1 grammar).
    pub fingerprint: String,
    /// The vector, when carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<Vec<f32>>,
}

/// The unit of exchange.
///
/// Required members: `id`, `kind`, `title`, `score`, `token_cost`. Every
/// other member is omitted when absent or empty, and `representation` is
/// omitted when `full`, so a frame serializes exactly as other implementations
/// expect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextFrame {
    /// Provider-scoped, stable, non-empty identifier.
    pub id: String,
    /// What the frame is.
    pub kind: FrameKind,
    /// Human label (F2). Never a bare id.
    pub title: String,
    /// Inline content; untrusted data. Absent for `reference` frames (never `""`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// SHA-256 of exactly the inline content bytes (D1); third part of the FrameId.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_digest: Option<String>,
    /// The source resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// How content is carried; omitted when `full`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Representation::is_full"
    )]
    pub representation: Representation,
    /// Fidelity of the inline content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_fidelity: Option<ContentFidelity>,
    /// Hash of the complete source content (compact/reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_content_hash: Option<String>,
    /// Resolver handle (compact/reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_ref: Option<ContentRef>,
    /// How a compact rendering was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
    /// Lowest fidelity the provider considers acceptable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_content_fidelity: Option<ContentFidelity>,
    /// Whether inline content is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_content_requirement: Option<InlineContentRequirement>,
    /// Provider-normalised relevance in [0, 1] (F1).
    pub score: f32,
    /// Cost of the inline content in budget tokens, exactly `ceil(bytes / 4)` (B3, P4).
    pub token_cost: u32,
    /// Cost of the full source by a real tokenizer (named in `tokenizer_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_token_cost: Option<u32>,
    /// Tokenizer behind `canonical_token_cost`, e.g. `openai:o200k_base`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_ref: Option<String>,
    /// Start of validity (F4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// End of validity (F4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
    /// When the provider recorded this content (F4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    /// Where the content came from.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub provenance: Vec<Provenance>,
    /// The label a host cites the frame by (F3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_label: Option<String>,
    /// The frame's embedding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<FrameEmbedding>,
    /// Graph edges (G1, G2).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub relations: Vec<Relation>,
}

impl ContextFrame {
    /// A minimal full frame with the required members; everything else empty.
    /// `token_cost` is computed from `content` (B3) so the value starts honest.
    pub fn new(
        id: impl Into<String>,
        kind: FrameKind,
        title: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let content = content.into();
        ContextFrame {
            id: id.into(),
            kind,
            title: title.into(),
            token_cost: crate::budget::token_cost_for(Some(&content)),
            content: Some(content),
            content_digest: None,
            uri: None,
            representation: Representation::Full,
            content_fidelity: None,
            canonical_content_hash: None,
            content_ref: None,
            transform: None,
            minimum_content_fidelity: None,
            inline_content_requirement: None,
            score: 0.0,
            canonical_token_cost: None,
            tokenizer_ref: None,
            valid_from: None,
            valid_to: None,
            recorded_at: None,
            provenance: Vec::new(),
            citation_label: None,
            embedding: None,
            relations: Vec::new(),
        }
    }

    /// F1: the score is a number in [0, 1] (NaN fails).
    pub fn has_valid_score(&self) -> bool {
        (0.0..=1.0).contains(&self.score)
    }

    /// B3: `token_cost` equals the cost recomputed from the inline content.
    pub fn has_honest_token_cost(&self) -> bool {
        self.token_cost == crate::budget::token_cost_for(self.content.as_deref())
    }

    /// The identity of this frame as served by `provider_id` (A1, D2).
    pub fn frame_id(&self, provider_id: &str) -> crate::FrameId {
        crate::FrameId {
            provider_id: provider_id.to_owned(),
            frame_id: self.id.clone(),
            content_digest: self.content_digest.clone(),
        }
    }

    /// The file provenance entries (those F5 governs).
    pub fn file_provenance(&self) -> impl Iterator<Item = &Provenance> {
        self.provenance.iter().filter(|p| p.is_file())
    }
}
