//! The catalogue of checks ([`CheckId`]) and what the checks share.
//!
//! Each check is one function returning an [`Outcome`]: pass, fail or
//! skipped with evidence, or *not applicable* when the provider's declared
//! capabilities do not call for it (G4 without `graph`, H4 without
//! `correlation`, …). A check that needs frames and got none is *skipped*,
//! never passed vacuously.
//!
//! Most checks run on one connection (the *main* session, `Main`) in a
//! fixed order; malformed input and the version mismatch get a second
//! connection and shutdown a third (a provider that crashes or exits there
//! must not take the other checks down), and those run concurrently with
//! the main session.

use contextgraph_types::validate::Anchor;
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, ProviderInfo, Violation,
};

pub(crate) use crate::outcome::{Evidence, Kind, Outcome};
use crate::probe::{Probe, QueryReply};
use crate::SuiteOptions;

pub(crate) mod answers;
pub(crate) mod correlation;
pub(crate) mod embedding;
pub(crate) mod handshake;
pub(crate) mod provenance;
pub(crate) mod robustness;
pub(crate) mod verify;

/// Every check, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum CheckId {
    /// H1–H3: a `handshake_ack` in the host's family, non-empty identity.
    Handshake,
    /// H3: a host of another family gets `incompatible_version`, never an ack or a hang.
    VersionMismatch,
    /// C5: no off-machine egress scope next to `egress: false`.
    ConsentScope,
    /// Resolve rule and P5: compact/reference only with resolve; frames only in advertised representations.
    Representations,
    /// R1: a plain query is answered (not a crash, not silence).
    QueryAnswered,
    /// F1–F5 grammar, D1 recomputed, D2 ids, P1–P3, G1–G2, U2 closed kinds.
    FrameValidity,
    /// B1, B3, B4, P4 and honest `truncated`, at the usual budget and tiny ones.
    BudgetHonesty,
    /// `as_of`: no frame dated after the pinned instant.
    AsOf,
    /// Q1: each declared kind filtered exactly; an undeclared kind yields nothing.
    KindsFilter,
    /// G4: graph providers return anchored frames and rank them first.
    AnchorRelevance,
    /// F5: file provenance digests re-hashed from the bytes on disk.
    FileProvenance,
    /// V1–V4: real digests `valid`, mutated `stale`, unknown ids never `valid`.
    VerifyHonesty,
    /// H4: several ids in flight, each echoed with its own answer.
    Correlation,
    /// E1: fingerprint grammar; own dimension answered, another rejected with `bad_request`.
    EmbeddingFingerprint,
    /// U1: unknown members and notifications are ignored.
    UnknownMembers,
    /// D2: the same query twice gives the same frame ids and digests.
    Determinism,
    /// R1: malformed lines get `bad_request` and the provider stays alive.
    MalformedInput,
    /// §1: nothing but envelopes on the wire.
    WireFraming,
    /// R2: the process exits by itself on `shutdown`.
    Shutdown,
}

impl CheckId {
    /// Every check, in report order.
    pub const ALL: [CheckId; 19] = [
        CheckId::Handshake,
        CheckId::VersionMismatch,
        CheckId::ConsentScope,
        CheckId::Representations,
        CheckId::QueryAnswered,
        CheckId::FrameValidity,
        CheckId::BudgetHonesty,
        CheckId::AsOf,
        CheckId::KindsFilter,
        CheckId::AnchorRelevance,
        CheckId::FileProvenance,
        CheckId::VerifyHonesty,
        CheckId::Correlation,
        CheckId::EmbeddingFingerprint,
        CheckId::UnknownMembers,
        CheckId::Determinism,
        CheckId::MalformedInput,
        CheckId::WireFraming,
        CheckId::Shutdown,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            CheckId::Handshake => "handshake",
            CheckId::VersionMismatch => "version-mismatch",
            CheckId::ConsentScope => "consent-scope",
            CheckId::Representations => "representations",
            CheckId::QueryAnswered => "query-answered",
            CheckId::FrameValidity => "frame-validity",
            CheckId::BudgetHonesty => "budget-honesty",
            CheckId::AsOf => "as-of",
            CheckId::KindsFilter => "kinds-filter",
            CheckId::AnchorRelevance => "anchor-relevance",
            CheckId::FileProvenance => "file-provenance",
            CheckId::VerifyHonesty => "verify-honesty",
            CheckId::Correlation => "correlation",
            CheckId::EmbeddingFingerprint => "embedding-fingerprint",
            CheckId::UnknownMembers => "unknown-members",
            CheckId::Determinism => "determinism",
            CheckId::MalformedInput => "malformed-input",
            CheckId::WireFraming => "wire-framing",
            CheckId::Shutdown => "shutdown",
        }
    }

    /// The check called `name`.
    pub fn from_name(name: &str) -> Option<CheckId> {
        CheckId::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The requirement anchors the check covers.
    pub fn anchors(self) -> &'static [&'static str] {
        match self {
            CheckId::Handshake => &["H1", "H2", "H3"],
            CheckId::VersionMismatch => &["H3"],
            CheckId::ConsentScope => &["C5"],
            CheckId::Representations => &["resolve", "P5"],
            CheckId::QueryAnswered => &["R1"],
            CheckId::FrameValidity => &[
                "F1", "F2", "F3", "F4", "F5", "D1", "D2", "P1", "P2", "P3", "G1", "G2", "U2",
            ],
            CheckId::BudgetHonesty => &["B1", "B3", "B4", "P4", "truncated"],
            CheckId::AsOf => &["as_of"],
            CheckId::KindsFilter => &["Q1"],
            CheckId::AnchorRelevance => &["G4"],
            CheckId::FileProvenance => &["F5"],
            CheckId::VerifyHonesty => &["V1", "V2", "V3", "V4"],
            CheckId::Correlation => &["H4"],
            CheckId::EmbeddingFingerprint => &["E1"],
            CheckId::UnknownMembers => &["U1"],
            CheckId::Determinism => &["D2"],
            CheckId::MalformedInput => &["R1"],
            CheckId::WireFraming => &["§1"],
            CheckId::Shutdown => &["R2"],
        }
    }

    /// What the check proves, in one line.
    pub fn summary(self) -> &'static str {
        match self {
            CheckId::Handshake => "handshake answered with a handshake_ack in the host's major family, naming the provider",
            CheckId::VersionMismatch => "a contextgraph/2 host gets incompatible_version, never a claim to speak its family and never silence (an ack in the provider's own family is reported as ambiguous)",
            CheckId::ConsentScope => "declared egress scopes agree with data_flow.egress",
            CheckId::Representations => "compact/reference only with resolve; frames only in advertised representations",
            CheckId::QueryAnswered => "a plain query is answered, not met with a crash or silence",
            CheckId::FrameValidity => "every frame served is valid, its content_digest recomputed from its content",
            CheckId::BudgetHonesty => "costs are exact and within max_tokens/max_frames at usual and tiny budgets; truncated is honest",
            CheckId::AsOf => "a pinned as_of excludes every frame dated after it",
            CheckId::KindsFilter => "each declared kind is filtered exactly; an undeclared kind yields nothing",
            CheckId::AnchorRelevance => "given an anchor, a graph provider returns anchored frames and lists them first (list order is the ranking)",
            CheckId::FileProvenance => "file provenance digests match the bytes on disk (a range past the end is a warning, its clipped bytes re-hashed)",
            CheckId::VerifyHonesty => "verify says valid only for digests it serves now, judged by frame id and digest",
            CheckId::Correlation => "several requests in flight are each answered with their own id",
            CheckId::EmbeddingFingerprint => "the declared embedding space is well-formed and enforced",
            CheckId::UnknownMembers => "unknown members and notifications are ignored",
            CheckId::Determinism => "the same query twice gives the same frame ids and digests",
            CheckId::MalformedInput => "malformed lines get bad_request and the provider stays alive",
            CheckId::WireFraming => "nothing but envelopes is written to the wire",
            CheckId::Shutdown => "the process exits by itself within the grace period after shutdown",
        }
    }
}

/// What the provider acknowledged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ack {
    pub protocol_version: String,
    pub provider: ProviderInfo,
    pub capabilities: Capabilities,
}

/// One answered query, kept for the checks that judge every frame served.
#[derive(Debug, Clone)]
pub(crate) struct Served {
    pub query: ContextQuery,
    pub result: ContextQueryResult,
}

/// The budget of the baseline query: what a typical host asks for.
pub(crate) const USUAL_MAX_FRAMES: u32 = 20;
/// See [`USUAL_MAX_FRAMES`].
pub(crate) const USUAL_MAX_TOKENS: u32 = 8000;

/// The main session's state, shared by the checks that run on it in order.
pub(crate) struct Main<'o> {
    pub probe: Option<Probe>,
    /// Why there is no probe (the provider could not be started).
    pub no_probe: Option<String>,
    pub ack: Option<Ack>,
    /// Why there is no ack.
    pub no_ack: Option<String>,
    pub options: &'o SuiteOptions,
    /// The query every other query is derived from, and its answer.
    pub baseline: Option<Served>,
    pub served: Vec<Served>,
}

impl Main<'_> {
    /// The acknowledged handshake, or the skip saying why there is none.
    pub fn ack(&self) -> Result<&Ack, Outcome> {
        match &self.ack {
            Some(a) => Ok(a),
            None => Err(Outcome::skipped(format!(
                "no usable handshake_ack: {}",
                self.no_ack
                    .as_deref()
                    .unwrap_or("the handshake did not complete")
            ))),
        }
    }

    /// The live probe, or the skip saying why it cannot be used.
    pub fn live(&mut self) -> Result<&mut Probe, Outcome> {
        if self.ack.is_none() {
            return Err(self
                .ack()
                .err()
                .unwrap_or_else(|| Outcome::skipped("no handshake")));
        }
        let reason = match &self.probe {
            None => self
                .no_probe
                .clone()
                .unwrap_or_else(|| "no connection".into()),
            Some(p) => match p.broken() {
                Some(b) => format!("the connection was lost earlier: {b}"),
                None => String::new(),
            },
        };
        match &mut self.probe {
            Some(p) if reason.is_empty() => Ok(p),
            _ => Err(Outcome::skipped(reason)),
        }
    }

    /// The baseline query (even when it was answered with no frames).
    pub fn base_query(&self) -> Result<ContextQuery, Outcome> {
        match &self.baseline {
            Some(b) => Ok(b.query.clone()),
            None => Err(Outcome::skipped(
                "the baseline query was not answered with frames",
            )),
        }
    }

    /// The baseline answer, which must hold at least one frame.
    pub fn base_frames(&self) -> Result<Served, Outcome> {
        match &self.baseline {
            Some(b) if !b.result.frames.is_empty() => Ok(b.clone()),
            Some(b) => Err(Outcome::skipped(format!(
                "the provider returned no frames for goal {:?} (nor for the other goals tried), so there is nothing to judge; pass --goal with text its content matches",
                b.query.goal
            ))),
            None => Err(Outcome::skipped("the baseline query was not answered with frames")),
        }
    }

    /// Ask a query on the live probe, keeping a `frames` answer in `served`.
    pub fn ask(&mut self, query: &ContextQuery, what: &str) -> Result<QueryReply, Outcome> {
        let probe = self.live()?;
        match probe.query(query, what) {
            Ok(reply) => {
                if let QueryReply::Frames(result) = &reply {
                    self.served.push(Served {
                        query: query.clone(),
                        result: result.clone(),
                    });
                }
                Ok(reply)
            }
            Err(b) => Err(Outcome::fail(b.0)),
        }
    }

    /// Every frame served on this connection, each distinct (id, digest) once.
    pub fn distinct_frames(&self) -> Vec<&ContextFrame> {
        let mut seen = std::collections::BTreeSet::new();
        self.served
            .iter()
            .flat_map(|s| &s.result.frames)
            .filter(|f| seen.insert((f.id.as_str(), f.content_digest.as_deref())))
            .collect()
    }
}

/// Violations of `result` as an answer to `query`, content digests
/// recomputed (the types crate's rules with the SDK's hasher), restricted to
/// `keep`.
pub(crate) fn violations(
    query: &ContextQuery,
    result: &ContextQueryResult,
    keep: impl Fn(Anchor) -> bool,
) -> Vec<Violation> {
    result
        .validate_with(query, &contextgraph_provider_sdk::Sha256Hasher)
        .into_iter()
        .filter(|v| keep(v.anchor))
        .collect()
}

/// `frames[3].score` → the id of frame 3 and `score`, for evidence that
/// names frames by id (paths shift between answers, ids do not).
pub(crate) fn locate<'r>(
    result: &'r ContextQueryResult,
    path: &'r str,
) -> (Option<&'r str>, &'r str) {
    let Some(rest) = path.strip_prefix("frames[") else {
        return (None, path);
    };
    let Some((index, field)) = rest.split_once(']') else {
        return (None, path);
    };
    let id = index
        .parse::<usize>()
        .ok()
        .and_then(|i| result.frames.get(i))
        .map(|f| f.id.as_str());
    (id, field.trim_start_matches('.'))
}

/// A violation as evidence: `frame "id": B3 at token_cost: …`.
pub(crate) fn describe_violation(result: &ContextQueryResult, v: &Violation) -> String {
    match locate(result, &v.path) {
        (Some(id), field) if !field.is_empty() => {
            format!("frame {id:?}: {} at {field}: {}", v.anchor, v.message)
        }
        (Some(id), _) => format!("frame {id:?}: {}: {}", v.anchor, v.message),
        (None, _) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::MAX_EVIDENCE_LINES;

    #[test]
    fn names_are_unique_and_round_trip() {
        for c in CheckId::ALL {
            assert_eq!(CheckId::from_name(c.name()), Some(c));
            assert!(!c.anchors().is_empty(), "{c:?}");
        }
        let mut names: Vec<_> = CheckId::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CheckId::ALL.len());
    }

    #[test]
    fn evidence_is_bounded_and_a_fail_line_fails() {
        let mut e = Evidence::default();
        for i in 0..100 {
            e.note(format!("line {i}"));
        }
        assert!(!e.failed());
        e.fail("broken");
        let o = e.finish();
        assert_eq!(o.kind, Kind::Fail);
        assert_eq!(o.evidence.len(), MAX_EVIDENCE_LINES + 1);
        assert!(
            o.evidence.iter().any(|l| l == "✗ broken"),
            "a finding is never pushed out by notes: {:?}",
            o.evidence
        );
        assert_eq!(
            o.evidence.last().map(String::as_str),
            Some("… and 77 more line(s)")
        );
    }

    #[test]
    fn warnings_and_ambiguities_do_not_fail_and_are_kept_in_order() {
        let mut e = Evidence::default();
        e.note("seen");
        e.warn("past the end");
        e.ambiguous("reading A; reading B");
        let o = e.finish();
        assert_eq!(o.kind, Kind::Pass);
        assert_eq!(
            o.evidence,
            [
                "seen",
                "warning: past the end",
                "ambiguous: reading A; reading B"
            ]
        );
    }
}
