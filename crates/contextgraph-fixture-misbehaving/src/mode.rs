//! The catalogue of behaviours: one conformant `normal` mode and one mode per
//! guarantee a host or a conformance suite must be able to catch.
//!
//! A check that only ever passes proves nothing (REQUIREMENTS §5). Each mode
//! here breaks exactly one rule, and names it ([`Mode::rule`]), so a suite
//! can assert that *its* check for that rule is the one that fires. A few
//! modes are conformant on purpose ([`Mode::is_conformant`]): they exercise a
//! host path (consent gates, lock-step) rather than a failure.

use std::fmt;
use std::str::FromStr;

/// One behaviour of the misbehaving provider, chosen with `--mode`.
///
/// Everything a mode does not name stays exactly as in [`Mode::Normal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Mode {
    /// Fully conformant; exercises every declared capability.
    Normal,
    /// B3: one frame's `token_cost` is overstated.
    LyingCost,
    /// B3: one frame's `token_cost` is understated.
    UnderReportedCost,
    /// F1: one frame scores 1.5.
    BadScore,
    /// F3: one frame's `citation_label` is `""`.
    EmptyCitation,
    /// F2: one frame's `title` is `""`.
    EmptyTitle,
    /// F4: one frame's `recorded_at` is `2026-07-20 18:00:00`.
    BadTimestamp,
    /// D1: one frame's `content_digest` is `sha256:abc`.
    MalformedDigest,
    /// F5: one file provenance digest is well-formed but not the digest of the bytes on disk.
    StaleDigest,
    /// D1: one `content_digest` is well-formed but not the digest of the content.
    DigestMismatch,
    /// B4: answers with `max_frames + 50` frames.
    FrameFlood,
    /// B1: Σ `token_cost` exceeds `max_tokens` (every cost honest).
    BudgetOverrun,
    /// Q1: returns kinds that were not requested.
    IgnoredKinds,
    /// `as_of`: returns a frame recorded after the pinned instant.
    IgnoredAsOf,
    /// G4: ranks anchored frames last (or omits them).
    IgnoredAnchors,
    /// V1: answers `valid` for every identity, mutated or unknown.
    RubberStampVerify,
    /// V2: declares `verify` but answers an empty verdict list.
    HollowVerify,
    /// H4: replies carry no `id` although correlation is declared.
    DroppedId,
    /// H4: replies echo a different `id`.
    WrongId,
    /// H1/H3: acknowledges with `contextgraph/2.0`.
    WrongVersion,
    /// C5: `egress: false` with the off-machine scope `third-party-index`.
    ScopeLie,
    /// Resolve rule: advertises `compact` without `resolve`.
    RepresentationLie,
    /// R1: writes to stderr and exits 3 on the first query.
    CrashOnQuery,
    /// R1: exits 3 on a malformed line.
    CrashOnGarbage,
    /// R1: answers malformed input with `internal` instead of `bad_request`.
    WrongErrorCode,
    /// R2: ignores `shutdown` and never exits until killed.
    HangOnShutdown,
    /// E1: answers a wrong-dimension query embedding with frames.
    AcceptWrongDimension,
    /// §1 framing: garbage, blank, oversized and unknown-type lines before each
    /// reply after the handshake ack (the ack itself comes clean).
    GarbageLines,
    /// U2: one extra frame of kind `hologram` among good ones.
    UnknownKind,
    /// Host deadlines: sleeps `--delay-ms` before each reply.
    SlowReply,
    /// §1 framing: prints `starting up...` on stdout before the handshake ack.
    StdoutLog,
    /// Host line cap: answers a query with an unterminated line that never ends.
    EndlessLine,
    /// C1: `egress: true`, no scopes (conformant, needs consent).
    Egress,
    /// C6: `egress: true` with scope `third-party-model` (conformant, needs a receipt).
    EgressScope,
    /// H4: no correlation; replies carry no `id`, strictly in order (conformant).
    Lockstep,
    /// D1, the foreign way: every `content_digest` is the placeholder
    /// `sha256:1111…`, and verify compares against that same placeholder.
    PlaceholderDigest,
    /// F5 warning only: the last, short window of each file claims a full
    /// window (`L1-20` for a 12-line file), its digest over the lines that
    /// exist (conformant: a warning, not a failure).
    RangePastEnd,
    /// Masking case: `placeholder-digest` *and* `rubber-stamp-verify`.
    PlaceholderDigestRubberStampVerify,
    /// Masking case: `placeholder-digest` *and* `hollow-verify`.
    PlaceholderDigestHollowVerify,
    /// Masking case: `range-past-end` *and* `stale-digest`.
    RangePastEndStaleDigest,
    /// H1/H3 ambiguity: a host of another family gets a `handshake_ack` in
    /// this provider's own version instead of `incompatible_version`
    /// (conformant; the suite reports it as ambiguous).
    AckOwnVersion,
    /// V2 ambiguity: verify answers `unknown` unless `provider_id` is the
    /// announced name (conformant; the suite reports it as ambiguous).
    OwnNameVerify,
    /// G4 reading: anchored frames are listed first but scored below the
    /// unanchored ones (conformant: the list order is the ranking).
    AnchoredLowScore,
    /// H3: acknowledges whatever version the host names, a foreign family
    /// included, claiming to speak it.
    EchoVersion,
}

/// A fault that a [`Mode`] can lay under its own: the kind of thing another
/// implementation does throughout its answers (a "baseline" problem), so a
/// checker that stopped at it would miss the mode's second fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Baseline {
    /// Every `content_digest` is [`PLACEHOLDER_DIGEST`](crate::baseline::PLACEHOLDER_DIGEST).
    PlaceholderDigest,
    /// Every file's last, short window claims a full window.
    RangePastEnd,
}

/// Name, rule broken (or exercised), one-line description.
struct Entry {
    mode: Mode,
    name: &'static str,
    rule: &'static str,
    description: &'static str,
}

#[rustfmt::skip]
const CATALOGUE: [Entry; 44] = [
    Entry { mode: Mode::Normal, name: "normal", rule: "none", description: "fully conformant; exercises every declared capability" },
    Entry { mode: Mode::LyingCost, name: "lying-cost", rule: "B3", description: "one frame's token_cost is overstated" },
    Entry { mode: Mode::UnderReportedCost, name: "under-reported-cost", rule: "B3", description: "one frame's token_cost is understated" },
    Entry { mode: Mode::BadScore, name: "bad-score", rule: "F1", description: "one frame has score 1.5" },
    Entry { mode: Mode::EmptyCitation, name: "empty-citation", rule: "F3", description: "one frame has citation_label \"\"" },
    Entry { mode: Mode::EmptyTitle, name: "empty-title", rule: "F2", description: "one frame has title \"\"" },
    Entry { mode: Mode::BadTimestamp, name: "bad-timestamp", rule: "F4", description: "one frame has recorded_at \"2026-07-20 18:00:00\"" },
    Entry { mode: Mode::MalformedDigest, name: "malformed-digest", rule: "D1", description: "one frame has content_digest \"sha256:abc\"" },
    Entry { mode: Mode::StaleDigest, name: "stale-digest", rule: "F5", description: "one file provenance digest is well-formed but not the digest of the bytes on disk" },
    Entry { mode: Mode::DigestMismatch, name: "digest-mismatch", rule: "D1", description: "one content_digest is well-formed but not the digest of the content" },
    Entry { mode: Mode::FrameFlood, name: "frame-flood", rule: "B4", description: "answers with max_frames + 50 frames" },
    Entry { mode: Mode::BudgetOverrun, name: "budget-overrun", rule: "B1", description: "the frames' total token_cost exceeds max_tokens (each cost honest)" },
    Entry { mode: Mode::IgnoredKinds, name: "ignored-kinds", rule: "Q1", description: "returns frames of kinds that were not requested" },
    Entry { mode: Mode::IgnoredAsOf, name: "ignored-as-of", rule: "as_of", description: "returns a frame recorded after the query's as_of" },
    Entry { mode: Mode::IgnoredAnchors, name: "ignored-anchors", rule: "G4", description: "ranks anchored frames last, or omits them" },
    Entry { mode: Mode::RubberStampVerify, name: "rubber-stamp-verify", rule: "V1", description: "verify answers valid for everything, mutated digests and unknown ids included" },
    Entry { mode: Mode::HollowVerify, name: "hollow-verify", rule: "V2", description: "declares verify but answers an empty verdict list" },
    Entry { mode: Mode::DroppedId, name: "dropped-id", rule: "H4", description: "replies omit the request id although correlation is declared" },
    Entry { mode: Mode::WrongId, name: "wrong-id", rule: "H4", description: "replies echo a different id than the request's" },
    Entry { mode: Mode::WrongVersion, name: "wrong-version", rule: "H1", description: "acknowledges the handshake with contextgraph/2.0" },
    Entry { mode: Mode::ScopeLie, name: "scope-lie", rule: "C5", description: "declares egress: false with the off-machine scope third-party-index" },
    Entry { mode: Mode::RepresentationLie, name: "representation-lie", rule: "resolve", description: "advertises the compact representation without resolve" },
    Entry { mode: Mode::CrashOnQuery, name: "crash-on-query", rule: "R1", description: "writes a message to stderr and exits 3 on the first query" },
    Entry { mode: Mode::CrashOnGarbage, name: "crash-on-garbage", rule: "R1", description: "exits 3 on a malformed line instead of answering bad_request" },
    Entry { mode: Mode::WrongErrorCode, name: "wrong-error-code", rule: "R1", description: "answers malformed input with code internal instead of bad_request" },
    Entry { mode: Mode::HangOnShutdown, name: "hang-on-shutdown", rule: "R2", description: "ignores shutdown and never exits until killed" },
    Entry { mode: Mode::AcceptWrongDimension, name: "accept-wrong-dimension", rule: "E1", description: "answers a query embedding of the wrong dimension with frames" },
    Entry { mode: Mode::GarbageLines, name: "garbage-lines", rule: "framing", description: "writes a garbage line, a blank line, a 17 MiB line and {\"type\":\"ping\"} before each reply after the handshake ack" },
    Entry { mode: Mode::UnknownKind, name: "unknown-kind", rule: "U2", description: "adds one frame of kind hologram among good ones (queries without a kinds filter)" },
    Entry { mode: Mode::SlowReply, name: "slow-reply", rule: "deadline", description: "sleeps --delay-ms (default 2000) before each reply" },
    Entry { mode: Mode::StdoutLog, name: "stdout-log", rule: "framing", description: "prints \"starting up...\" on stdout before the handshake ack" },
    Entry { mode: Mode::EndlessLine, name: "endless-line", rule: "line-cap", description: "answers a query with an unterminated line, written forever in chunks" },
    Entry { mode: Mode::Egress, name: "egress", rule: "C1", description: "declares egress: true with no scopes (conformant; needs consent)" },
    Entry { mode: Mode::EgressScope, name: "egress-scope", rule: "C6", description: "declares egress: true with scope third-party-model (conformant; needs a receipt)" },
    Entry { mode: Mode::Lockstep, name: "lockstep", rule: "H4", description: "declares no correlation; replies carry no id, strictly in order (conformant)" },
    Entry { mode: Mode::PlaceholderDigest, name: "placeholder-digest", rule: "D1", description: "every content_digest is the placeholder sha256:1111…; verify compares against it" },
    Entry { mode: Mode::RangePastEnd, name: "range-past-end", rule: "F5", description: "each file's last, short window claims a full 20-line range past the end of the file, its digest over the lines that exist (conformant; a warning)" },
    Entry { mode: Mode::PlaceholderDigestRubberStampVerify, name: "placeholder-digest+rubber-stamp-verify", rule: "D1+V1", description: "placeholder-digest and rubber-stamp-verify at once: the verify fault must not hide behind the digest fault" },
    Entry { mode: Mode::PlaceholderDigestHollowVerify, name: "placeholder-digest+hollow-verify", rule: "D1+V2", description: "placeholder-digest and hollow-verify at once: the verify fault must not hide behind the digest fault" },
    Entry { mode: Mode::AckOwnVersion, name: "ack-own-version", rule: "H1/H3", description: "answers a host of another family with a handshake_ack in its own version, not incompatible_version (conformant; ambiguous)" },
    Entry { mode: Mode::OwnNameVerify, name: "own-name-verify", rule: "V2", description: "verify answers unknown unless provider_id is the announced name (conformant; ambiguous)" },
    Entry { mode: Mode::AnchoredLowScore, name: "anchored-low-score", rule: "G4", description: "lists anchored frames first but scores them below the unanchored ones (conformant: list order is the ranking)" },
    Entry { mode: Mode::EchoVersion, name: "echo-version", rule: "H3", description: "acknowledges whatever version the host names, contextgraph/2.0 included" },
    Entry { mode: Mode::RangePastEndStaleDigest, name: "range-past-end+stale-digest", rule: "F5+F5", description: "range-past-end and stale-digest at once: the stale digest must not hide behind the range warning" },
];

impl Mode {
    /// Every mode, `normal` first, in catalogue order.
    pub const ALL: [Mode; 44] = {
        let mut all = [Mode::Normal; 44];
        let mut i = 0;
        while i < CATALOGUE.len() {
            all[i] = CATALOGUE[i].mode;
            i += 1;
        }
        all
    };

    fn entry(self) -> &'static Entry {
        // Every variant has exactly one catalogue entry (checked by a test),
        // so the fallback to `normal` is unreachable in practice.
        CATALOGUE
            .iter()
            .find(|e| e.mode == self)
            .unwrap_or(&CATALOGUE[0])
    }

    /// The `--mode` name, e.g. `lying-cost`.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The rule the mode breaks (or, for a conformant mode, exercises): a
    /// requirement anchor such as `B3`, or a label for a rule without one
    /// (`as_of`, `resolve`, `framing`, `line-cap`, `deadline`); `none` for
    /// `normal`.
    pub fn rule(self) -> &'static str {
        self.entry().rule
    }

    /// One line saying what the mode does, as listed by `--help`.
    pub fn description(self) -> &'static str {
        self.entry().description
    }

    /// Whether a correct host and conformance suite should accept the
    /// provider in this mode: `normal`, `lockstep`, the two egress modes
    /// (which are honest declarations that a host must gate behind consent),
    /// `range-past-end` (a warning, not a failure), and the readings the
    /// protocol's text leaves open or this project reads permissively
    /// (`ack-own-version`, `own-name-verify`, `anchored-low-score`).
    pub fn is_conformant(self) -> bool {
        matches!(
            self,
            Mode::Normal
                | Mode::Lockstep
                | Mode::Egress
                | Mode::EgressScope
                | Mode::RangePastEnd
                | Mode::AckOwnVersion
                | Mode::OwnNameVerify
                | Mode::AnchoredLowScore
        )
    }

    /// The mode as a baseline fault and the one mode that behaves on top of
    /// it: `placeholder-digest+hollow-verify` is
    /// `(Some(PlaceholderDigest), HollowVerify)`, `placeholder-digest` alone
    /// `(Some(PlaceholderDigest), Normal)`, every other mode `(None, self)`.
    pub fn split(self) -> (Option<Baseline>, Mode) {
        match self {
            Mode::PlaceholderDigest => (Some(Baseline::PlaceholderDigest), Mode::Normal),
            Mode::RangePastEnd => (Some(Baseline::RangePastEnd), Mode::Normal),
            Mode::PlaceholderDigestRubberStampVerify => {
                (Some(Baseline::PlaceholderDigest), Mode::RubberStampVerify)
            }
            Mode::PlaceholderDigestHollowVerify => {
                (Some(Baseline::PlaceholderDigest), Mode::HollowVerify)
            }
            Mode::RangePastEndStaleDigest => (Some(Baseline::RangePastEnd), Mode::StaleDigest),
            other => (None, other),
        }
    }

    /// Whether replies echo request ids (H4). Only `lockstep` declares no
    /// correlation; `dropped-id` and `wrong-id` declare it and then break it.
    pub fn declares_correlation(self) -> bool {
        self != Mode::Lockstep
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--mode` value that names no mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode {given:?}; run with --help to list the modes")]
pub struct UnknownMode {
    /// What was given.
    pub given: String,
}

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        CATALOGUE
            .iter()
            .find(|e| e.name == text)
            .map(|e| e.mode)
            .ok_or_else(|| UnknownMode {
                given: text.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_has_exactly_one_catalogue_entry_and_a_unique_name() {
        for mode in Mode::ALL {
            let entries = CATALOGUE.iter().filter(|e| e.mode == mode).count();
            assert_eq!(entries, 1, "{mode:?}");
            assert_eq!(mode.name().parse::<Mode>(), Ok(mode));
        }
        let mut names: Vec<_> = Mode::ALL.iter().map(|m| m.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Mode::ALL.len());
    }

    #[test]
    fn combined_modes_split_into_a_baseline_and_a_plain_mode() {
        for mode in Mode::ALL {
            let (baseline, plain) = mode.split();
            assert_eq!(plain.split(), (None, plain), "{mode}: one level only");
            if let Some(b) = baseline {
                let b_name = match b {
                    Baseline::PlaceholderDigest => "placeholder-digest",
                    Baseline::RangePastEnd => "range-past-end",
                };
                assert!(mode.name().starts_with(b_name), "{mode}");
                if plain != Mode::Normal {
                    assert_eq!(mode.name(), format!("{b_name}+{plain}"));
                }
            }
        }
    }

    #[test]
    fn unknown_names_are_rejected_with_the_name() {
        let err = "lying".parse::<Mode>().unwrap_err();
        assert_eq!(err.given, "lying");
        assert!(err.to_string().contains("--help"));
    }
}
