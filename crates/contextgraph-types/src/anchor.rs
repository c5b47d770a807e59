//! Requirement anchors: the names every validation finding is reported under.

use std::fmt;

/// A requirement anchor: the label a violation is reported under.
///
/// Each anchor is defined, in this project's words, in the repository's
/// [`docs/requirements.md`](../../../docs/requirements.md); each variant's
/// doc line links to its paragraph there. Rules stated without a numbered
/// anchor get a descriptive label of their own ([`Shape`](Self::Shape),
/// [`AsOf`](Self::AsOf), [`Resolve`](Self::Resolve),
/// [`Truncated`](Self::Truncated)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Anchor {
    /// [H1](../../../docs/requirements.md#h1): the provider answers `handshake` with an ack in the host's version family.
    H1,
    /// [H2](../../../docs/requirements.md#h2): `provider.name` and `provider.version` are non-empty.
    H2,
    /// [H3](../../../docs/requirements.md#h3): a family mismatch is a named error, never a hang.
    H3,
    /// [H4](../../../docs/requirements.md#h4): a correlating provider echoes the request `id`; others are queried in lock-step.
    H4,
    /// [C5](../../../docs/requirements.md#c5): an off-machine egress scope with `egress: false` is a contradiction.
    C5,
    /// [C6](../../../docs/requirements.md#c6): off-machine scopes need a live consent receipt each, or the provider is refused.
    C6,
    /// [Q1](../../../docs/requirements.md#q1): a non-empty `kinds` filter is obeyed.
    Q1,
    /// [E1](../../../docs/requirements.md#e1): a query embedding is sent only to a provider with the same fingerprint, and must fit its dimensions.
    E1,
    /// [F1](../../../docs/requirements.md#f1): `score` is in [0, 1].
    F1,
    /// [F2](../../../docs/requirements.md#f2): `title` is non-empty.
    F2,
    /// [F3](../../../docs/requirements.md#f3): `citation_label` is present and non-empty.
    F3,
    /// [F4](../../../docs/requirements.md#f4): timestamps are strict UTC `YYYY-MM-DDTHH:MM:SS(.f)Z` on real dates.
    F4,
    /// [F5](../../../docs/requirements.md#f5): a file provenance digest is the SHA-256 of the exact bytes its `uri` and `range` address.
    F5,
    /// [D1](../../../docs/requirements.md#d1): `content_digest` is the SHA-256 of the inline content.
    D1,
    /// [D2](../../../docs/requirements.md#d2): same (provider, frame id, digest) means same content; composition is in canonical order.
    D2,
    /// [G1](../../../docs/requirements.md#g1): every relation has a non-empty `display_name`.
    G1,
    /// [G2](../../../docs/requirements.md#g2): every relation has a non-empty `target_uri`.
    G2,
    /// [G4](../../../docs/requirements.md#g4): a `graph` provider returns and ranks anchored frames first.
    G4,
    /// [P1](../../../docs/requirements.md#p1): a `full` frame carries content and no reference machinery.
    P1,
    /// [P2](../../../docs/requirements.md#p2): a `compact` frame carries content, digests, transform and reference.
    P2,
    /// [P3](../../../docs/requirements.md#p3): a `reference` frame carries no content, digest or transform.
    P3,
    /// [P4](../../../docs/requirements.md#p4): `token_cost` prices only the inline rendering.
    P4,
    /// [P5](../../../docs/requirements.md#p5): only advertised representations are requested; others are refused or served `full`.
    P5,
    /// [B1](../../../docs/requirements.md#b1): the frames' `token_cost`s sum to at most `max_tokens`.
    B1,
    /// [B3](../../../docs/requirements.md#b3): `token_cost` is `ceil(content bytes / 4)` exactly.
    B3,
    /// [B4](../../../docs/requirements.md#b4): at most `max_frames` frames.
    B4,
    /// [V1](../../../docs/requirements.md#v1): `verify` carries identities, never bodies.
    V1,
    /// [V2](../../../docs/requirements.md#v2): a verifying provider answers `verify` with `verified`; a missing verdict is `unknown`.
    V2,
    /// [V3](../../../docs/requirements.md#v3): a held frame is reused only on `valid`.
    V3,
    /// [V4](../../../docs/requirements.md#v4): `stale` may carry a replacement digest, never a body.
    V4,
    /// [R1](../../../docs/requirements.md#r1): malformed input gets `bad_request`, and the provider stays alive.
    R1,
    /// [R2](../../../docs/requirements.md#r2): `shutdown` ends the provider cleanly.
    R2,
    /// [U2](../../../docs/requirements.md#u2): an unknown frame kind is opaque, never fatal.
    U2,
    /// [UR1](../../../docs/requirements.md#ur1): a host can report the usage of every query it ran.
    UR1,
    /// [shape](../../../docs/requirements.md#shape): a member's basic shape (required non-empty strings, §2 of the digest).
    Shape,
    /// [as_of](../../../docs/requirements.md#as_of): `as_of`: no frame dated after the pinned instant.
    AsOf,
    /// [resolve](../../../docs/requirements.md#resolve): advertising `compact`/`reference` requires `resolve: true`.
    Resolve,
    /// [truncated](../../../docs/requirements.md#truncated): `truncated` / `dropped_estimate` must agree.
    Truncated,
}

impl Anchor {
    /// The label cited in reports, e.g. `F1`, `as_of`.
    pub fn as_str(&self) -> &'static str {
        use Anchor::*;
        match self {
            H1 => "H1",
            H2 => "H2",
            H3 => "H3",
            H4 => "H4",
            C5 => "C5",
            C6 => "C6",
            Q1 => "Q1",
            E1 => "E1",
            F1 => "F1",
            F2 => "F2",
            F3 => "F3",
            F4 => "F4",
            F5 => "F5",
            D1 => "D1",
            D2 => "D2",
            G1 => "G1",
            G2 => "G2",
            G4 => "G4",
            P1 => "P1",
            P2 => "P2",
            P3 => "P3",
            P4 => "P4",
            P5 => "P5",
            B1 => "B1",
            B3 => "B3",
            B4 => "B4",
            V1 => "V1",
            V2 => "V2",
            V3 => "V3",
            V4 => "V4",
            R1 => "R1",
            R2 => "R2",
            U2 => "U2",
            UR1 => "UR1",
            Shape => "shape",
            AsOf => "as_of",
            Resolve => "resolve",
            Truncated => "truncated",
        }
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
