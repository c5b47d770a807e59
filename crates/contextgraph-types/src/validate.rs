//! Validation: every rule that can be checked on a value, reporting *every*
//! violation with its requirement anchor, a field path and a sentence.
//!
//! The entry points are [`ContextFrame::validate`], [`ContextQueryResult::validate`],
//! [`ContextQuery::validate`] and [`handshake_ack`]. Each has a `_with`
//! variant taking a [`ContentHasher`] so that crates able to hash can also
//! have D1 (content digest = SHA-256 of the content) recomputed; this crate
//! itself does no hashing.
//!
//! Validation of a valid value allocates nothing: paths and messages are
//! built only when a violation is found, so checking a 4 MiB answer costs a
//! small fraction of parsing it.

use std::fmt;

pub use crate::anchor::Anchor;
use crate::budget::token_cost_for;
use crate::capability::{fingerprint_dimensions, Capabilities, ProviderInfo};
use crate::digest::{is_sha256_digest, LineRange};
use crate::frame::{ContextFrame, FrameKind, Representation};
use crate::query::{ContextQuery, ContextQueryResult};
use crate::time::Timestamp;
use crate::version::{ProtocolVersion, PROTOCOL_VERSION};

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Violation {
    /// The requirement broken.
    pub anchor: Anchor,
    /// Where, as a path into the message: `frames[3].provenance[0].digest`.
    pub path: String,
    /// What is wrong, in a sentence a person understands.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}: {}", self.anchor, self.path, self.message)
    }
}

/// Something that can compute a wire digest (`sha256:<hex>`) of bytes.
/// Implemented outside this crate, which does no hashing.
pub trait ContentHasher {
    /// The `sha256:` + 64 lowercase hex digest of `bytes`.
    fn sha256_digest(&self, bytes: &[u8]) -> String;
}

/// The query an answer is checked against (B1, B4, Q1, `as_of`).
#[derive(Debug, Clone, Copy)]
pub struct QueryContext<'a> {
    /// B1 bound.
    pub max_tokens: u32,
    /// B4 bound.
    pub max_frames: u32,
    /// Q1 filter; empty means any kind.
    pub kinds: &'a [FrameKind],
    /// The pinned instant, parsed.
    pub as_of: Option<Timestamp>,
}

impl<'a> QueryContext<'a> {
    /// The context of `query` (an unparseable `as_of` is ignored here; it is
    /// the query's own violation, reported by [`ContextQuery::validate`]).
    pub fn of(query: &'a ContextQuery) -> Self {
        QueryContext {
            max_tokens: query.max_tokens,
            max_frames: query.max_frames,
            kinds: &query.kinds,
            as_of: query
                .as_of
                .as_deref()
                .and_then(|t| Timestamp::parse(t).ok()),
        }
    }
}

/// Collects violations, building paths only when something is wrong.
struct Report<'p> {
    prefix: &'p str,
    out: Vec<Violation>,
}

impl<'p> Report<'p> {
    fn new(prefix: &'p str) -> Self {
        Report {
            prefix,
            out: Vec::new(),
        }
    }

    fn push(&mut self, anchor: Anchor, field: impl fmt::Display, message: impl Into<String>) {
        let path = if self.prefix.is_empty() {
            field.to_string()
        } else {
            format!("{}.{}", self.prefix, field)
        };
        self.out.push(Violation {
            anchor,
            path,
            message: message.into(),
        });
    }

    fn timestamp(&mut self, field: &str, value: Option<&str>) -> Option<Timestamp> {
        let text = value?;
        match Timestamp::parse(text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.push(
                    Anchor::F4,
                    field,
                    format!("{field} {text:?} is not a protocol timestamp: {e}"),
                );
                None
            }
        }
    }
}

fn blank(s: &str) -> bool {
    s.trim().is_empty()
}

impl ContextFrame {
    /// Every violation of the rules a frame can be checked against on its own
    /// (F1–F5, B3, P1–P3, G1–G2, E1, D1 grammar, shape), paths relative to the frame.
    pub fn validate(&self) -> Vec<Violation> {
        validate_frame(self, "", None)
    }

    /// [`validate`](Self::validate), also recomputing `content_digest` (D1) with `hasher`.
    pub fn validate_with(&self, hasher: &dyn ContentHasher) -> Vec<Violation> {
        validate_frame(self, "", Some(hasher))
    }
}

/// Validate one frame, with paths under `prefix` (e.g. `frames[3]`).
pub fn validate_frame(
    frame: &ContextFrame,
    prefix: &str,
    hasher: Option<&dyn ContentHasher>,
) -> Vec<Violation> {
    let mut r = Report::new(prefix);
    check_frame(frame, &mut r, hasher);
    r.out
}

fn check_frame(f: &ContextFrame, r: &mut Report<'_>, hasher: Option<&dyn ContentHasher>) {
    if f.id.is_empty() {
        r.push(
            Anchor::Shape,
            "id",
            "frame id is empty; ids must be non-empty and stable",
        );
    }
    if !f.has_valid_score() {
        r.push(
            Anchor::F1,
            "score",
            format!("score {} is outside [0, 1]", f.score),
        );
    }
    if blank(&f.title) {
        r.push(
            Anchor::F2,
            "title",
            "title is empty; every frame needs a human label",
        );
    }
    match f.citation_label.as_deref() {
        None => r.push(
            Anchor::F3,
            "citation_label",
            "citation_label is missing; hosts cite frames by label",
        ),
        Some(l) if blank(l) => r.push(Anchor::F3, "citation_label", "citation_label is empty"),
        Some(_) => {}
    }
    let expected_cost = token_cost_for(f.content.as_deref());
    if f.token_cost != expected_cost {
        let bytes = f.content.as_ref().map_or(0, String::len);
        r.push(
            Anchor::B3,
            "token_cost",
            format!(
                "token_cost {} does not match the content: {bytes} bytes cost ceil({bytes}/4) = {expected_cost}",
                f.token_cost
            ),
        );
    }
    check_representation(f, r);
    if let Some(d) = &f.content_digest {
        if !is_sha256_digest(d) {
            r.push(
                Anchor::D1,
                "content_digest",
                format!("content_digest {d:?} is not sha256: followed by 64 lowercase hex digits"),
            );
        } else if let (Some(h), Some(c)) = (hasher, &f.content) {
            let actual = h.sha256_digest(c.as_bytes());
            if &actual != d {
                r.push(
                    Anchor::D1,
                    "content_digest",
                    format!("content_digest {d} is not the digest of the content ({actual})"),
                );
            }
        }
    }
    let valid_from = r.timestamp("valid_from", f.valid_from.as_deref());
    let valid_to = r.timestamp("valid_to", f.valid_to.as_deref());
    r.timestamp("recorded_at", f.recorded_at.as_deref());
    if let (Some(a), Some(b)) = (valid_from, valid_to) {
        if a > b {
            r.push(
                Anchor::F4,
                "valid_to",
                "valid_to is earlier than valid_from",
            );
        }
    }
    for (i, p) in f.provenance.iter().enumerate() {
        check_provenance(p, i, r);
    }
    for (i, rel) in f.relations.iter().enumerate() {
        if rel.rel.is_empty() {
            r.push(
                Anchor::Shape,
                format_args!("relations[{i}].rel"),
                "relation name is empty",
            );
        }
        if blank(&rel.target_uri) {
            r.push(
                Anchor::G2,
                format_args!("relations[{i}].target_uri"),
                "relation target_uri is empty",
            );
        }
        match rel.display_name.as_deref() {
            None => r.push(
                Anchor::G1,
                format_args!("relations[{i}].display_name"),
                "relation has no display_name; edges are shown by human label",
            ),
            Some(n) if blank(n) => r.push(
                Anchor::G1,
                format_args!("relations[{i}].display_name"),
                "relation display_name is empty",
            ),
            Some(_) => {}
        }
    }
    if let Some(e) = &f.embedding {
        match fingerprint_dimensions(&e.fingerprint) {
            None => r.push(
                Anchor::E1,
                "embedding.fingerprint",
                format!(
                    "fingerprint {:?} is not <model-id>/<dimensions>[/<normalization>]",
                    e.fingerprint
                ),
            ),
            Some(dims) => {
                if let Some(v) = &e.vector {
                    if v.len() != dims {
                        r.push(
                            Anchor::E1,
                            "embedding.vector",
                            format!(
                                "vector has {} dimensions but the fingerprint declares {dims}",
                                v.len()
                            ),
                        );
                    }
                }
            }
        }
    }
    if let Some(t) = &f.tokenizer_ref {
        if t.is_empty() {
            r.push(Anchor::Shape, "tokenizer_ref", "tokenizer_ref is empty");
        }
    }
}

fn check_representation(f: &ContextFrame, r: &mut Report<'_>) {
    let rep = f.representation;
    let anchor = match rep {
        Representation::Full => Anchor::P1,
        Representation::Compact => Anchor::P2,
        Representation::Reference => Anchor::P3,
    };
    let must_have = |r: &mut Report<'_>, present: bool, field: &str| {
        if !present {
            r.push(anchor, field, format!("a {rep} frame must carry {field}"));
        }
    };
    let must_not = |r: &mut Report<'_>, present: bool, field: &str| {
        if present {
            r.push(
                anchor,
                field,
                format!("a {rep} frame must not carry {field}"),
            );
        }
    };
    match rep {
        Representation::Full => {
            must_have(r, f.content.is_some(), "content");
            must_not(r, f.content_ref.is_some(), "content_ref");
            must_not(r, f.transform.is_some(), "transform");
            must_not(
                r,
                f.canonical_content_hash.is_some(),
                "canonical_content_hash",
            );
        }
        Representation::Compact => {
            must_have(r, f.content.is_some(), "content");
            must_have(r, f.content_digest.is_some(), "content_digest");
            must_have(
                r,
                f.canonical_content_hash.is_some(),
                "canonical_content_hash",
            );
            must_have(r, f.transform.is_some(), "transform");
            must_have(r, f.content_ref.is_some(), "content_ref");
        }
        Representation::Reference => {
            must_have(r, f.content_ref.is_some(), "content_ref");
            must_have(
                r,
                f.canonical_content_hash.is_some(),
                "canonical_content_hash",
            );
            must_not(r, f.content.is_some(), "content");
            must_not(r, f.content_digest.is_some(), "content_digest");
            must_not(r, f.transform.is_some(), "transform");
        }
    }
    if let Some(h) = &f.canonical_content_hash {
        if !is_sha256_digest(h) {
            r.push(anchor, "canonical_content_hash", format!("canonical_content_hash {h:?} is not sha256: followed by 64 lowercase hex digits"));
        }
    }
    if let Some(c) = &f.content_ref {
        if c.provider_id.is_empty() {
            r.push(
                Anchor::Shape,
                "content_ref.provider_id",
                "content_ref.provider_id is empty",
            );
        }
        if c.uri.is_empty() {
            r.push(Anchor::Shape, "content_ref.uri", "content_ref.uri is empty");
        }
        r.timestamp("content_ref.expires_at", c.expires_at.as_deref());
    }
    if let Some(t) = &f.transform {
        for (field, value) in [
            ("method", &t.method),
            ("implementation", &t.implementation),
            ("version", &t.version),
        ] {
            if value.is_empty() {
                r.push(
                    Anchor::Shape,
                    format_args!("transform.{field}"),
                    format!("transform.{field} is empty"),
                );
            }
        }
    }
}

fn check_provenance(p: &crate::frame::Provenance, i: usize, r: &mut Report<'_>) {
    if p.kind.is_empty() {
        r.push(
            Anchor::Shape,
            format_args!("provenance[{i}].type"),
            "provenance type is empty",
        );
    }
    if let Some(d) = &p.digest {
        if !is_sha256_digest(d) {
            r.push(
                Anchor::F5,
                format_args!("provenance[{i}].digest"),
                format!("digest {d:?} is not sha256: followed by 64 lowercase hex digits"),
            );
        }
    }
    if !p.is_file() {
        return;
    }
    if p.uri.as_deref().is_none_or(blank) {
        r.push(
            Anchor::F5,
            format_args!("provenance[{i}].uri"),
            "file provenance must name the file it read (uri)",
        );
    }
    if p.digest.is_none() {
        r.push(
            Anchor::F5,
            format_args!("provenance[{i}].digest"),
            "file provenance must carry the sha256 digest of the bytes it addresses",
        );
    }
    if let Some(range) = &p.range {
        if LineRange::parse(range).is_none() {
            r.push(
                Anchor::F5,
                format_args!("provenance[{i}].range"),
                format!("range {range:?} is not L<start>-<end> with 1 <= start <= end"),
            );
        }
    }
}

impl ContextQueryResult {
    /// Every violation in this answer to `query`: each frame's own rules
    /// (paths `frames[i]…`) plus B1, B4, Q1, `as_of` and duplicate ids.
    pub fn validate(&self, query: &ContextQuery) -> Vec<Violation> {
        validate_result(self, &QueryContext::of(query), None)
    }

    /// [`validate`](Self::validate), also recomputing content digests (D1).
    pub fn validate_with(
        &self,
        query: &ContextQuery,
        hasher: &dyn ContentHasher,
    ) -> Vec<Violation> {
        validate_result(self, &QueryContext::of(query), Some(hasher))
    }
}

/// Validate an answer against a query context.
pub fn validate_result(
    result: &ContextQueryResult,
    ctx: &QueryContext<'_>,
    hasher: Option<&dyn ContentHasher>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut top = Report::new("");
    let total = result.total_token_cost();
    if total > u64::from(ctx.max_tokens) {
        top.push(
            Anchor::B1,
            "frames",
            format!(
                "frames cost {total} tokens in total, over the budget of {}",
                ctx.max_tokens
            ),
        );
    }
    if !result.respects_frame_limit(ctx.max_frames) {
        top.push(
            Anchor::B4,
            "frames",
            format!(
                "{} frames returned, over max_frames {}",
                result.frames.len(),
                ctx.max_frames
            ),
        );
    }
    if !result.truncated && result.dropped_estimate.is_some_and(|d| d > 0) {
        top.push(
            Anchor::Truncated,
            "dropped_estimate",
            "dropped_estimate is positive but truncated is false",
        );
    }
    out.append(&mut top.out);
    let mut ids: Vec<(&str, usize)> = result
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id.as_str(), i))
        .collect();
    ids.sort_unstable();
    for pair in ids.windows(2) {
        if pair[0].0 == pair[1].0 && !pair[0].0.is_empty() {
            out.push(Violation {
                anchor: Anchor::D2,
                path: format!("frames[{}].id", pair[1].1),
                message: format!(
                    "frame id {:?} appears more than once (also frames[{}])",
                    pair[0].0, pair[0].1
                ),
            });
        }
    }
    let mut prefix = String::new();
    for (i, frame) in result.frames.iter().enumerate() {
        let before = out.len();
        let mut r = Report::new("");
        check_frame(frame, &mut r, hasher);
        if !ctx.kinds.is_empty() && !ctx.kinds.contains(&frame.kind) {
            r.push(
                Anchor::Q1,
                "kind",
                format!(
                    "kind {:?} was not requested (kinds filter: {})",
                    frame.kind.as_str(),
                    join_kinds(ctx.kinds)
                ),
            );
        }
        if let Some(pin) = ctx.as_of {
            for (field, value) in [
                ("recorded_at", &frame.recorded_at),
                ("valid_from", &frame.valid_from),
            ] {
                if let Some(t) = value.as_deref().and_then(|v| Timestamp::parse(v).ok()) {
                    if t > pin {
                        r.push(
                            Anchor::AsOf,
                            field,
                            format!(
                                "{field} {} is after the query's as_of {pin}",
                                value.as_deref().unwrap_or_default()
                            ),
                        );
                    }
                }
            }
        }
        if !r.out.is_empty() {
            prefix.clear();
            use fmt::Write;
            let _ = write!(prefix, "frames[{i}]");
            for mut v in r.out {
                v.path = format!("{prefix}.{}", v.path);
                out.push(v);
            }
        }
        debug_assert!(out.len() >= before);
    }
    out
}

fn join_kinds(kinds: &[FrameKind]) -> String {
    kinds
        .iter()
        .map(FrameKind::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ContextQuery {
    /// Every violation a provider can see in a query on its own: an empty
    /// goal, a malformed `as_of` (F4), a non-finite embedding value.
    pub fn validate(&self) -> Vec<Violation> {
        let mut r = Report::new("query");
        if blank(&self.goal) {
            r.push(Anchor::Shape, "goal", "goal is empty");
        }
        r.timestamp("as_of", self.as_of.as_deref());
        if let Some(v) = &self.embedding {
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                r.push(
                    Anchor::E1,
                    format_args!("embedding[{i}]"),
                    "embedding values must be finite numbers",
                );
            }
        }
        r.out
    }

    /// E1 from the provider's side: a query vector whose length contradicts
    /// the provider's declared fingerprint dimension.
    pub fn embedding_violation(&self, provider_fingerprint: Option<&str>) -> Option<Violation> {
        let v = self.embedding.as_ref()?;
        let message = match provider_fingerprint.and_then(fingerprint_dimensions) {
            Some(dims) if dims == v.len() => return None,
            Some(dims) => format!(
                "embedding has {} dimensions but this provider's space has {dims}",
                v.len()
            ),
            None => "this provider declared no embedding space; it cannot accept a query vector"
                .to_owned(),
        };
        Some(Violation {
            anchor: Anchor::E1,
            path: "query.embedding".to_owned(),
            message,
        })
    }
}

/// Every violation in a handshake ack, judged by a host speaking
/// `host_version` (pass [`PROTOCOL_VERSION`] normally): H1/H3 version family,
/// H2 identity, C5 scopes, the resolve rule, E1 fingerprint grammar.
pub fn handshake_ack(
    protocol_version: &str,
    provider: &ProviderInfo,
    capabilities: &Capabilities,
    host_version: &str,
) -> Vec<Violation> {
    let mut r = Report::new("");
    match ProtocolVersion::parse(protocol_version) {
        None => r.push(Anchor::H1, "protocol_version", format!("{protocol_version:?} is not a protocol version (contextgraph/<major>.<minor>[-draft])")),
        Some(v) => {
            let host = ProtocolVersion::parse(host_version).or_else(|| ProtocolVersion::parse(PROTOCOL_VERSION));
            if let Some(host) = host {
                if !v.interoperates_with(&host) {
                    r.push(
                        Anchor::H3,
                        "protocol_version",
                        format!("provider speaks family {} but this host speaks {}; they cannot interoperate", v.family(), host.family()),
                    );
                }
            }
        }
    }
    if blank(&provider.name) {
        r.push(Anchor::H2, "provider.name", "provider name is empty");
    }
    if blank(&provider.version) {
        r.push(Anchor::H2, "provider.version", "provider version is empty");
    }
    let flow = &provider.data_flow;
    for (i, s) in flow.egress_scopes.iter().enumerate() {
        if !s.is_valid() {
            r.push(
                Anchor::C5,
                format_args!("provider.data_flow.egress_scopes[{i}]"),
                format!(
                    "scope {:?} is neither a base scope nor vendor:name",
                    s.as_str()
                ),
            );
        } else if s.is_off_machine() && !flow.egress {
            r.push(
                Anchor::C5,
                format_args!("provider.data_flow.egress_scopes[{i}]"),
                format!(
                    "off-machine scope {:?} declared with egress: false",
                    s.as_str()
                ),
            );
        }
    }
    if !capabilities.representations_consistent() {
        r.push(
            Anchor::Resolve,
            "capabilities.representations",
            "compact or reference is advertised without resolve: true",
        );
    }
    if let Some(fp) = &capabilities.embeddings_fingerprint {
        if fingerprint_dimensions(fp).is_none() {
            r.push(
                Anchor::E1,
                "capabilities.embeddings_fingerprint",
                format!("fingerprint {fp:?} is not <model-id>/<dimensions>[/<normalization>]"),
            );
        }
    }
    r.out
}
