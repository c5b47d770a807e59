//! What a session remembers between turns, and how it is stored.
//!
//! The state is small on purpose: per frame the model holds, its identity
//! (with the digest of the version it was sent), the label it was cited
//! under, the tokens its block cost, the goal it came with (to re-query it
//! when its provider cannot `verify`) and the turn it was sent in. No frame
//! body is kept: reuse is decided by the provider's `verify` (V3), never by
//! comparing against a copy we hold.
//!
//! A stored session is untrusted input ([`Session::from_json`]): it is
//! size-capped, every field is bounded and checked, and anything that does
//! not check out is a typed error the caller can answer with a fresh
//! session. A fresh session is always safe: the model is sent everything
//! again.

use std::collections::BTreeSet;

use contextgraph_types::FrameId;
use serde::{Deserialize, Serialize};

/// The `format` tag of a stored session.
pub const SESSION_FORMAT: &str = "cgp-session/1";
/// Most frames a session remembers; beyond it the oldest are forgotten (a
/// forgotten frame that comes up again is simply sent again).
pub const MAX_HELD: usize = 2048;
/// Largest stored session accepted, in bytes.
pub const MAX_SESSION_BYTES: usize = 2 * 1024 * 1024;
/// Longest label or goal kept, in bytes.
pub const MAX_TEXT_BYTES: usize = 2048;
/// Longest provider id or frame id kept, in bytes.
pub const MAX_ID_BYTES: usize = 1024;

/// One frame the model holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldFrame {
    /// Its identity, with the digest of the version the model was sent.
    pub frame: FrameId,
    /// The label the model cites it by (unique in the session).
    pub label: String,
    /// Budget tokens its block cost when it was sent (what reuse saves).
    pub tokens: u64,
    /// The goal whose answer carried it: re-asked when its provider cannot
    /// confirm it with `verify`.
    pub goal: String,
    /// The turn it was sent in (1-based).
    pub turn: u64,
    /// The resource its first provenance entry names (a file URI for the
    /// workspace provider), when it names one: when this turn shows that
    /// resource changed, the frame may have moved even though its bytes
    /// are still `valid`, so its label is checked again. Absent in
    /// sessions stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The provider's own digest of the version sent, when the host
    /// repaired it (D1: the declared digest was not of the content, and
    /// `frame` carries the recomputed one). `verify` presents this one, as
    /// the host's `FrameCache` does: the provider knows its frames by what
    /// it declared, and would otherwise honestly answer `stale` for a frame
    /// that did not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_digest: Option<String>,
}

/// Cumulative figures of a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionTotals {
    /// Turns answered.
    pub turns: u64,
    /// Budget tokens sent (notes, preamble and blocks).
    pub tokens_sent: u64,
    /// Budget tokens not sent because the model already held the block.
    pub tokens_saved: u64,
    /// Frame blocks sent.
    pub frames_sent: u64,
    /// Frames listed as already in context instead of being sent.
    pub frames_reused: u64,
    /// Held frames checked with their provider (verify or re-query).
    pub frames_revalidated: u64,
    /// Held frames named as withdrawn.
    pub frames_withdrawn: u64,
}

impl SessionTotals {
    /// These totals with one more turn's figures added.
    pub fn plus(self, turn: &SessionTotals) -> SessionTotals {
        SessionTotals {
            turns: self.turns.saturating_add(turn.turns),
            tokens_sent: self.tokens_sent.saturating_add(turn.tokens_sent),
            tokens_saved: self.tokens_saved.saturating_add(turn.tokens_saved),
            frames_sent: self.frames_sent.saturating_add(turn.frames_sent),
            frames_reused: self.frames_reused.saturating_add(turn.frames_reused),
            frames_revalidated: self
                .frames_revalidated
                .saturating_add(turn.frames_revalidated),
            frames_withdrawn: self.frames_withdrawn.saturating_add(turn.frames_withdrawn),
        }
    }
}

/// What the model holds from earlier turns of one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    format: String,
    /// The boundary token of the session's fences, kept from turn to turn
    /// so that a frame's block has the same bytes whenever it is sent.
    token: Option<String>,
    /// The fence preamble was delivered (with `token`): later turns remind
    /// the model of it in one line instead of sending it again.
    #[serde(default)]
    preamble: bool,
    /// The provider whose blocks do not name it: declared with the
    /// preamble, so only once `preamble` was delivered (see
    /// `session/render.rs`). `None`: every block names its provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unnamed_provider: Option<String>,
    turn: u64,
    held: Vec<HeldFrame>,
    totals: SessionTotals,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            format: SESSION_FORMAT.to_owned(),
            token: None,
            preamble: false,
            unnamed_provider: None,
            turn: 0,
            held: Vec::new(),
            totals: SessionTotals::default(),
        }
    }
}

/// Why a stored session was not accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// Larger than [`MAX_SESSION_BYTES`].
    #[error("the session state is {0} bytes, over the {MAX_SESSION_BYTES}-byte limit")]
    TooLarge(usize),
    /// Not JSON of the session shape.
    #[error("the session state is not a cgp session: {0}")]
    Malformed(String),
    /// JSON of the right shape whose values break a rule.
    #[error("the session state is not valid: {0}")]
    Invalid(String),
}

impl Session {
    /// A session in which the model holds nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Turns answered so far.
    pub fn turn(&self) -> u64 {
        self.turn
    }

    /// The frames the model holds, in canonical FrameId order.
    pub fn held(&self) -> &[HeldFrame] {
        &self.held
    }

    /// Cumulative figures.
    pub fn totals(&self) -> SessionTotals {
        self.totals
    }

    /// The boundary token the session's fences use, once one was chosen.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Whether the fence preamble was delivered with the current token.
    pub fn preamble_delivered(&self) -> bool {
        self.preamble && self.token.is_some()
    }

    /// The provider whose blocks omit `provider=`, declared to the model
    /// with the preamble it holds; `None` when every block names its own.
    pub fn unnamed_provider(&self) -> Option<&str> {
        self.unnamed_provider
            .as_deref()
            .filter(|_| self.preamble_delivered())
    }

    pub(crate) fn next(
        &self,
        token: Option<String>,
        preamble: bool,
        unnamed_provider: Option<String>,
        mut held: Vec<HeldFrame>,
        turn_totals: &SessionTotals,
    ) -> Session {
        if held.len() > MAX_HELD {
            // Forget the oldest: a forgotten frame is sent again if it comes up.
            held.sort_by(|a, b| b.turn.cmp(&a.turn).then_with(|| a.frame.cmp(&b.frame)));
            held.truncate(MAX_HELD);
        }
        held.sort_by(|a, b| a.frame.cmp(&b.frame));
        Session {
            format: SESSION_FORMAT.to_owned(),
            token,
            preamble,
            unnamed_provider: unnamed_provider.filter(|_| preamble),
            turn: self.turn.saturating_add(1),
            held,
            totals: self.totals.plus(turn_totals),
        }
    }

    /// The stored form (JSON).
    pub fn to_json(&self) -> Vec<u8> {
        // Serialising plain data structs cannot fail; an empty state is the
        // safe answer if it ever did (everything is sent again).
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Read a stored session, checking everything: size, shape, format tag,
    /// the token's form, each frame identity, label and goal, unique labels
    /// and identities, at most [`MAX_HELD`] frames.
    pub fn from_json(bytes: &[u8]) -> Result<Session, SessionError> {
        if bytes.len() > MAX_SESSION_BYTES {
            return Err(SessionError::TooLarge(bytes.len()));
        }
        let session: Session = serde_json::from_slice(bytes)
            .map_err(|e| SessionError::Malformed(bounded(&e.to_string())))?;
        session.check()?;
        Ok(session)
    }

    fn check(&self) -> Result<(), SessionError> {
        let invalid = |m: String| Err(SessionError::Invalid(m));
        if self.format != SESSION_FORMAT {
            return invalid(format!(
                "format {:?}, expected {SESSION_FORMAT:?}",
                bounded(&self.format)
            ));
        }
        if let Some(token) = &self.token {
            let ok = (contextgraph_compose::fence::MIN_TOKEN_LEN
                ..=contextgraph_compose::fence::MAX_TOKEN_LEN)
                .contains(&token.len())
                && token
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !ok {
                return invalid("the boundary token is not 4 to 16 lowercase hex digits".into());
            }
        }
        if self
            .unnamed_provider
            .as_ref()
            .is_some_and(|p| p.is_empty() || p.len() > MAX_ID_BYTES)
        {
            return invalid("the unnamed provider is empty or oversized".into());
        }
        if self.held.len() > MAX_HELD {
            return invalid(format!(
                "{} held frames, over the {MAX_HELD} limit",
                self.held.len()
            ));
        }
        let mut ids = BTreeSet::new();
        let mut labels = BTreeSet::new();
        for h in &self.held {
            let id = &h.frame;
            if id.provider_id.is_empty()
                || id.frame_id.is_empty()
                || id.provider_id.len() > MAX_ID_BYTES
                || id.frame_id.len() > MAX_ID_BYTES
            {
                return invalid("a held frame has an empty or oversized identity".into());
            }
            for d in id.content_digest.iter().chain(&h.declared_digest) {
                if !contextgraph_types::is_sha256_digest(d) {
                    return invalid(format!(
                        "held frame {:?} has a malformed digest",
                        bounded(&id.frame_id)
                    ));
                }
            }
            if h.label.is_empty()
                || h.label.len() > MAX_TEXT_BYTES
                || h.goal.len() > MAX_TEXT_BYTES
                || h.uri.as_ref().is_some_and(|u| u.len() > MAX_TEXT_BYTES)
            {
                return invalid(
                    "a held frame has an empty or oversized label, or an oversized goal or uri"
                        .into(),
                );
            }
            if h.turn == 0 || h.turn > self.turn {
                return invalid(format!(
                    "held frame {:?} was sent in turn {}, outside turns 1 to {}",
                    bounded(&id.frame_id),
                    h.turn,
                    self.turn
                ));
            }
            let key = (id.provider_id.as_str(), id.frame_id.as_str());
            if !ids.insert(key) || !labels.insert(h.label.as_str()) {
                return invalid(format!(
                    "held frame {:?} or its label appears twice",
                    bounded(&id.frame_id)
                ));
            }
        }
        Ok(())
    }
}

fn bounded(text: &str) -> String {
    contextgraph_types::display_text::bounded(text, 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(frame_id: &str, label: &str, turn: u64) -> HeldFrame {
        HeldFrame {
            frame: FrameId {
                provider_id: "p".into(),
                frame_id: frame_id.into(),
                content_digest: Some(format!("sha256:{}", "a".repeat(64))),
            },
            label: label.into(),
            tokens: 10,
            goal: "g".into(),
            turn,
            uri: None,
            declared_digest: None,
        }
    }

    fn with(held: Vec<HeldFrame>, token: Option<&str>) -> Vec<u8> {
        Session {
            format: SESSION_FORMAT.into(),
            token: token.map(str::to_owned),
            preamble: false,
            unnamed_provider: None,
            turn: 2,
            held,
            totals: SessionTotals::default(),
        }
        .to_json()
    }

    #[test]
    fn a_valid_session_round_trips() {
        let mut with_uri = held("b", "B", 2);
        with_uri.uri = Some("file:///ws/src/b.rs".into());
        let bytes = with(vec![held("a", "A", 1), with_uri], Some("7c15"));
        let s = Session::from_json(&bytes).unwrap();
        assert_eq!(s.to_json(), bytes);
        assert_eq!(s.held().len(), 2);
        assert_eq!(s.held()[1].uri.as_deref(), Some("file:///ws/src/b.rs"));
        // A session stored before the uri was kept reads as one without it.
        let older = String::from_utf8(with(vec![held("a", "A", 1)], None)).unwrap();
        assert!(!older.contains("\"uri\""));
        assert_eq!(
            Session::from_json(older.as_bytes()).unwrap().held()[0].uri,
            None
        );
    }

    #[test]
    fn every_broken_rule_is_a_typed_error() {
        let invalid = |bytes: Vec<u8>| {
            assert!(
                matches!(Session::from_json(&bytes), Err(SessionError::Invalid(_))),
                "{}",
                String::from_utf8_lossy(&bytes)
            )
        };
        invalid(with(vec![held("a", "A", 1), held("a", "B", 1)], None));
        invalid(with(vec![held("a", "A", 1), held("b", "A", 1)], None));
        invalid(with(vec![held("a", "A", 3)], None));
        invalid(with(vec![held("a", "A", 0)], None));
        invalid(with(vec![held("a", "", 1)], None));
        invalid(with(vec![], Some("XYZ1")));
        invalid(with(vec![], Some("7c15</frame")));
        let mut long_uri = held("a", "A", 1);
        long_uri.uri = Some(format!("file:///{}", "x".repeat(MAX_TEXT_BYTES)));
        invalid(with(vec![long_uri], None));
        let mut bad_digest = held("a", "A", 1);
        bad_digest.frame.content_digest = Some("sha256:abc".into());
        invalid(with(vec![bad_digest], None));
        assert!(matches!(
            Session::from_json(b"{\"format\":1}"),
            Err(SessionError::Malformed(_))
        ));
        assert!(matches!(
            Session::from_json(&vec![b' '; MAX_SESSION_BYTES + 1]),
            Err(SessionError::TooLarge(_))
        ));
        let other_format = String::from_utf8(with(vec![], None))
            .unwrap()
            .replace(SESSION_FORMAT, "cgp-session/9");
        invalid(other_format.into_bytes());
    }

    #[test]
    fn the_oldest_frames_are_forgotten_beyond_the_bound() {
        let many: Vec<HeldFrame> = (0..MAX_HELD + 5)
            .map(|i| {
                held(
                    &format!("f{i:05}"),
                    &format!("L{i}"),
                    if i < 5 { 1 } else { 2 },
                )
            })
            .collect();
        let next = Session::new().next(None, false, None, many, &SessionTotals::default());
        assert_eq!(next.held().len(), MAX_HELD);
        assert!(next.held().iter().all(|h| h.turn == 2));
    }
}
