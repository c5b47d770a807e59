//! Context across turns: a conversation never pays twice for evidence the
//! model already holds, and never keeps evidence that went stale.
//!
//! [`Engine::context_in_session`] answers a goal as [`Engine::context`]
//! does, then compares the answer with what the [`Session`] says the model
//! already holds:
//!
//! - every held frame is revalidated with the host's
//!   [`revalidate`](contextgraph_host::Host::revalidate): `verify` where the
//!   provider declared it (V1, V2); a frame is reused **only** on an explicit
//!   `valid` (V3, D4). A frame its provider cannot confirm (no `verify`, an
//!   `unknown` or missing verdict, no digest (D3), a failed verify) is
//!   re-queried: looked up in this turn's answer, else asked again with the
//!   goal it came with;
//! - a frame of this turn's answer the model holds, confirmed `valid` with
//!   the same digest, is listed by label only ("already in context,
//!   unchanged"), not sent; when its label changed meanwhile (an edit above
//!   it moved its lines), it is listed as moved, old label to new, so the
//!   model never cites lines that now hold something else. A valid held
//!   frame outside the answer is listed as moved too when a provider served
//!   it this turn under a new label, or when its resource (its first
//!   provenance URI) is one this turn shows changed and asking its goal
//!   again finds it relabelled (within [`MAX_REQUERY_GOALS`], after
//!   re-checks);
//! - a frame that changed is sent in full with a note naming the earlier
//!   label it replaces; one that could not be confirmed is sent in full
//!   again; one that is gone, or could not be confirmed and cannot be sent
//!   again within the budget, is named as withdrawn;
//! - new frames are sent in full.
//!
//! The budget counts only what is sent (notes, preamble and blocks): when
//! that is over it, the weakest new blocks are left out (they were not
//! delivered, so nothing is recorded for them). Every block's bytes depend
//! only on the frame and the session's boundary token (see `session/render.rs`), so a
//! block sent again is byte-identical (D2).
//!
//! The turn does not change the session: it carries the next state
//! ([`SessionTurn::next_session`]), which the caller keeps only once the
//! turn was delivered — so the state never claims the model holds something
//! it was not given.

mod labels;
mod recheck;
mod render;
mod state;
mod usage;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use contextgraph_compose::Citation;
use contextgraph_host::{EvictionReason, FrameCache};
use contextgraph_types::{
    token_cost_for, token_cost_of_len, ContextFrame, FrameId, FrameKind, ServedFrame, UsageReport,
};
use serde::Serialize;

use crate::{ContextAnswer, ContextRequest, Engine, EngineError, SlotState};
use labels::{current_label, free_label, relabelled, same_label, Moved};
use recheck::{accepted, declared_digest, goals_to_ask, why, Check};
use render::{block_bytes, session_token, Notes, OutBlock};
use usage::call_usage;

pub use state::{
    HeldFrame, Session, SessionError, SessionTotals, MAX_HELD, MAX_SESSION_BYTES, SESSION_FORMAT,
};

/// Most earlier goals asked again in one turn to re-check frames whose
/// provider cannot `verify`; frames of further goals are withdrawn.
pub const MAX_REQUERY_GOALS: usize = 3;

/// Why a frame is sent in full this turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SendReason {
    /// The model does not hold it.
    New,
    /// The model holds an earlier version, cited under `replaces`.
    Changed {
        /// The label of the earlier block this one supersedes.
        replaces: String,
    },
    /// The model holds it, but its provider did not confirm it `valid` (V3),
    /// so it is sent again.
    Unconfirmed {
        /// The label of the earlier block this one supersedes.
        replaces: String,
        /// Why it could not be confirmed.
        detail: String,
    },
}

/// A frame sent in full this turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentFrame {
    /// The label it is cited by in this session.
    pub label: String,
    /// Its identity (the version sent).
    pub frame: FrameId,
    /// Budget tokens of its block.
    pub tokens: u64,
    /// Why it was sent.
    #[serde(flatten)]
    pub why: SendReason,
}

/// A frame named by label only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelledFrame {
    /// Its label in this session.
    pub label: String,
    /// Its identity.
    pub frame: FrameId,
    /// For a withdrawn frame: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A frame the model holds unchanged whose label is no longer right: its
/// bytes are the same (same digest, confirmed `valid`), but the provider
/// now cites it differently, typically because an edit above it moved its
/// lines. Not resent; the model is told the new label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MovedFrame {
    /// Its label from this turn on.
    pub label: String,
    /// The label it was delivered under.
    pub previous: String,
    /// Its identity.
    pub frame: FrameId,
}

/// One turn of a session. Its JSON is the account of the turn (turn, sent,
/// unchanged, withdrawn, figures, totals, …); the notes, prompt, citations
/// and usage report are left out of it because front ends place them
/// themselves (beside it, not twice).
#[derive(Debug, Clone, Serialize)]
pub struct SessionTurn {
    /// The turn's number (1-based).
    pub turn: u64,
    /// Notes for the model (outside any fence): what it already holds, what
    /// changed, what is withdrawn. Empty on a first turn with nothing to say.
    #[serde(skip)]
    pub notes: String,
    /// The preamble and the blocks sent (empty when nothing is sent).
    #[serde(skip)]
    pub prompt: String,
    /// The frames sent in full, in prompt order.
    pub sent: Vec<SentFrame>,
    /// Frames of this goal's answer the model already holds, unchanged.
    pub unchanged: Vec<LabelledFrame>,
    /// Frames the model already holds, unchanged in content but cited by a
    /// new label (their lines moved): of this goal's answer, or held from
    /// an earlier goal and served by a provider this turn.
    pub moved: Vec<MovedFrame>,
    /// Held frames that are no longer current.
    pub withdrawn: Vec<LabelledFrame>,
    /// Every frame of this turn's evidence (sent or already held) and every
    /// held frame relabelled this turn, with its session label and
    /// provenance, in prompt order then held order.
    #[serde(skip)]
    pub citations: Vec<Citation>,
    /// UR1 for this call: the frames it sent, with their costs.
    #[serde(skip)]
    pub usage: UsageReport,
    /// This turn's figures (`turns` = 1).
    pub figures: SessionTotals,
    /// The session's figures including this turn.
    pub totals: SessionTotals,
    /// Budget tokens an independent call would have sent for this goal
    /// (the composition's prompt).
    pub independent_tokens: u64,
    /// Time spent revalidating held frames with `verify`.
    #[serde(serialize_with = "micros")]
    pub revalidation: Duration,
    /// The boundary token changed this turn (a sent block contained the old one).
    pub token_changed: bool,
    /// The answer to the goal as an independent call would give it.
    #[serde(skip)]
    pub answer: ContextAnswer,
    #[serde(skip)]
    next: Session,
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

impl SessionTurn {
    /// Notes, then the blocks: everything the model is given this turn.
    pub fn text(&self) -> String {
        match (self.notes.is_empty(), self.prompt.is_empty()) {
            (true, _) => self.prompt.clone(),
            (false, true) => self.notes.clone(),
            (false, false) => format!("{}\n{}", self.notes, self.prompt),
        }
    }

    /// The session state to keep once this turn has been delivered.
    pub fn next_session(&self) -> &Session {
        &self.next
    }

    /// [`next_session`](Self::next_session), by value.
    pub fn into_next_session(self) -> Session {
        self.next
    }
}

type Key = (String, String);

fn key_of(id: &FrameId) -> Key {
    (id.provider_id.clone(), id.frame_id.clone())
}

/// A frame to send, before labels and bytes.
struct Candidate<'a> {
    frame: &'a ContextFrame,
    id: FrameId,
    wanted_label: String,
    provenance: Vec<contextgraph_types::Provenance>,
    why: SendReason,
    goal: String,
    /// From this goal's composition (true) or a re-check (false).
    selected: bool,
    /// The provider's own digest, when the host repaired it (D1).
    declared: Option<String>,
}

impl Engine {
    fn query_timeout(&self) -> Duration {
        self.slots
            .iter()
            .filter(|s| matches!(s.state, SlotState::Ready { .. }))
            .map(|s| s.timeout)
            .max()
            .unwrap_or_default()
    }

    /// Answer `request` as turn `session.turn() + 1` of `session` (see the
    /// module docs). `session` is not changed: keep
    /// [`SessionTurn::next_session`] once the turn has been delivered.
    pub async fn context_in_session(
        &self,
        session: &Session,
        request: &ContextRequest,
    ) -> Result<SessionTurn, EngineError> {
        let turn_no = session.turn().saturating_add(1);
        let mut cache = FrameCache::new();
        for h in session.held() {
            // The cache needs only identities (V1: verify carries no body).
            let mut skeleton = ContextFrame::new(h.frame.frame_id.clone(), FrameKind::Doc, "", "");
            skeleton.content_digest = h.frame.content_digest.clone();
            // Verify presents the provider's own digest when the host
            // repaired it, so an unchanged frame is confirmed `valid`.
            cache.insert_declared(&h.frame.provider_id, skeleton, h.declared_digest.clone());
        }
        let timeout = self.query_timeout();
        let revalidate = async {
            let started = std::time::Instant::now();
            let report = if cache.is_empty() {
                Default::default()
            } else {
                self.host.revalidate(&mut cache, timeout).await
            };
            (report, started.elapsed())
        };
        let (answer, (report, revalidation)) = tokio::join!(self.context(request), revalidate);
        let answer = answer?;
        let mut checks: BTreeMap<Key, Check> = BTreeMap::new();
        for id in &report.reusable {
            checks.insert(key_of(id), Check::Valid);
        }
        for (id, reason) in report.evicted {
            checks.insert(key_of(&id), Check::Evicted(reason));
        }
        let held: BTreeMap<Key, &HeldFrame> = session
            .held()
            .iter()
            .map(|h| (key_of(&h.frame), h))
            .collect();

        // This goal's evidence, against what is held.
        let mut unchanged: Vec<&HeldFrame> = Vec::new();
        // Held, unchanged, but cited differently now.
        let mut moved: Vec<Moved<'_>> = Vec::new();
        let mut candidates: Vec<Candidate<'_>> = Vec::new();
        let mut covered: BTreeSet<Key> = BTreeSet::new();
        for c in &answer.composition.citations {
            let key = key_of(&c.frame);
            let Some(frame) = accepted(&answer.outcomes, &key) else {
                continue;
            };
            covered.insert(key.clone());
            let why = match held.get(&key) {
                None => SendReason::New,
                Some(h) => {
                    let same = h.frame.content_digest.is_some()
                        && h.frame.content_digest == c.frame.content_digest;
                    match checks.get(&key) {
                        Some(Check::Valid) if same => {
                            if same_label(&h.label, &c.label) {
                                unchanged.push(h);
                            } else {
                                moved.push(Moved {
                                    held: h,
                                    label: c.label.clone(),
                                    provenance: c.provenance.clone(),
                                    in_answer: true,
                                });
                            }
                            continue;
                        }
                        _ if !same => SendReason::Changed {
                            replaces: h.label.clone(),
                        },
                        Some(Check::Evicted(reason)) => SendReason::Unconfirmed {
                            replaces: h.label.clone(),
                            detail: why(reason),
                        },
                        _ => SendReason::Unconfirmed {
                            replaces: h.label.clone(),
                            detail: "it could not be confirmed".into(),
                        },
                    }
                }
            };
            candidates.push(Candidate {
                frame,
                id: c.frame.clone(),
                wanted_label: c.label.clone(),
                provenance: c.provenance.clone(),
                why,
                goal: request.goal.clone(),
                selected: true,
                declared: declared_digest(&answer.outcomes, &key),
            });
        }

        // Held frames outside this goal's evidence: kept silently when
        // valid, withdrawn when gone, otherwise re-checked by querying.
        let mut withdrawn: Vec<(&HeldFrame, String)> = Vec::new();
        let mut recheck: Vec<(&HeldFrame, String)> = Vec::new();
        let mut kept: Vec<&HeldFrame> = Vec::new();
        for (key, h) in &held {
            if covered.contains(key) {
                continue;
            }
            match checks.get(key) {
                // Still valid; but when a provider served it this turn
                // under another label (an edit above it moved its lines),
                // the model is told, so it does not cite the old lines.
                Some(Check::Valid) => {
                    match accepted(&answer.outcomes, key).and_then(|f| relabelled(h, f, &key.0)) {
                        Some(m) => moved.push(m),
                        None => kept.push(h),
                    }
                }
                Some(Check::Evicted(EvictionReason::Gone)) => {
                    withdrawn.push((h, why(&EvictionReason::Gone)))
                }
                Some(Check::Evicted(reason)) => recheck.push((h, why(reason))),
                None => recheck.push((h, "it could not be confirmed".into())),
            }
        }
        // Resources this turn shows changed (a held frame of them is stale,
        // gone or moved, or was sent again changed): the other valid held
        // frames of such a resource may have moved without changing, so
        // their labels are checked by asking their goals again, within the
        // same bound as re-checks and after them.
        let stale_or_gone = held
            .iter()
            .filter(|(key, _)| {
                matches!(
                    checks.get(*key),
                    Some(Check::Evicted(
                        EvictionReason::Stale { .. } | EvictionReason::Gone
                    ))
                )
            })
            .map(|(_, h)| *h);
        let resent_changed = candidates
            .iter()
            .filter(|c| matches!(c.why, SendReason::Changed { .. }))
            .filter_map(|c| held.get(&key_of(&c.id)).copied());
        let touched: BTreeSet<&str> = stale_or_gone
            .chain(moved.iter().map(|m| m.held))
            .chain(resent_changed)
            .filter_map(|h| h.uri.as_deref())
            .collect();
        let (unsure, kept): (Vec<&HeldFrame>, Vec<&HeldFrame>) = kept
            .into_iter()
            .partition(|h| h.uri.as_deref().is_some_and(|u| touched.contains(u)));
        let mut goals = goals_to_ask(recheck.iter().map(|(h, _)| *h), &answer.outcomes);
        for g in goals_to_ask(unsure.iter().copied(), &answer.outcomes) {
            if !goals.iter().any(|(have, _)| *have == g.0) {
                goals.push(g);
            }
        }
        goals.truncate(MAX_REQUERY_GOALS);
        let mut requeried: Vec<ContextAnswer> = Vec::new();
        for (goal, _) in &goals {
            if goal.trim().is_empty() {
                continue;
            }
            // Asked as broadly as it first was likely to be: the kinds and
            // anchors of this turn are not those of the frame's turn.
            let again = ContextRequest {
                goal: (*goal).to_owned(),
                kinds: Vec::new(),
                anchors: Vec::new(),
                ..request.clone()
            };
            // A failed re-query leaves its frames unconfirmed: withdrawn below.
            if let Ok(a) = self.context(&again).await {
                requeried.push(a);
            }
        }
        // A frame whose resource changed, found again: moved or not.
        let mut kept = kept;
        for h in unsure {
            let key = key_of(&h.frame);
            match requeried
                .iter()
                .find_map(|a| accepted(&a.outcomes, &key))
                .and_then(|f| relabelled(h, f, &key.0))
            {
                Some(m) => moved.push(m),
                None => kept.push(h),
            }
        }
        for (h, detail) in recheck {
            let key = key_of(&h.frame);
            let found = std::iter::once(&answer)
                .chain(requeried.iter())
                .find_map(|a| {
                    accepted(&a.outcomes, &key).map(|f| (f, declared_digest(&a.outcomes, &key)))
                });
            match found {
                None => {
                    withdrawn.push((h, format!("{detail}, and its provider no longer offers it")))
                }
                Some((frame, declared)) => {
                    let id = frame.frame_id(&key.0);
                    let same = h.frame.content_digest.is_some()
                        && h.frame.content_digest == id.content_digest;
                    // The label it has now (as the composition would give
                    // it): an edit that changed it may also have moved it,
                    // and the resent bytes must be cited at their lines.
                    let wanted_label = current_label(frame, &key.0).to_owned();
                    candidates.push(Candidate {
                        frame,
                        id,
                        wanted_label,
                        provenance: frame.provenance.clone(),
                        why: if same {
                            SendReason::Unconfirmed {
                                replaces: h.label.clone(),
                                detail,
                            }
                        } else {
                            SendReason::Changed {
                                replaces: h.label.clone(),
                            }
                        },
                        goal: h.goal.clone(),
                        selected: false,
                        declared,
                    });
                }
            }
        }

        // Labels: unique among everything the model will hold.
        let mut taken: BTreeMap<String, Key> = BTreeMap::new();
        for h in unchanged.iter().chain(kept.iter()) {
            taken.insert(h.label.clone(), key_of(&h.frame));
        }
        let moved: Vec<Moved<'_>> = moved
            .into_iter()
            .map(|m| {
                let key = key_of(&m.held.frame);
                let label = free_label(&m.label, &key, &taken);
                taken.insert(label.clone(), key);
                Moved { label, ..m }
            })
            .collect();
        let mut labels: Vec<String> = Vec::with_capacity(candidates.len());
        for c in &candidates {
            let key = key_of(&c.id);
            let label = free_label(&c.wanted_label, &key, &taken);
            taken.insert(label.clone(), key);
            labels.push(label);
        }

        // Bytes, within the budget: the weakest re-checks go first, then the
        // weakest of this goal's frames.
        let budget = u64::from(answer.composition.audit.budget.requested);
        let mut included: Vec<bool> = vec![true; candidates.len()];
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&candidates[a], &candidates[b]);
            ca.selected
                .cmp(&cb.selected)
                .then_with(|| {
                    ca.frame
                        .score
                        .partial_cmp(&cb.frame.score)
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .then_with(|| cb.id.cmp(&ca.id))
        });
        let mut dropping = order.into_iter();
        let (token, token_changed, preamble_held, unnamed, blocks, notes) = loop {
            let outs: Vec<OutBlock<'_>> = candidates
                .iter()
                .zip(&labels)
                .zip(&included)
                .filter(|(_, inc)| **inc)
                .map(|((c, label), _)| OutBlock {
                    provider: &c.id.provider_id,
                    label,
                    title: &c.frame.title,
                    content: c.frame.content.as_deref().unwrap_or(""),
                })
                .collect();
            let (token, changed) = session_token(session.token(), &outs);
            let preamble_held = session.preamble_delivered() && !changed;
            // Declared with the preamble: kept once chosen, chosen (the
            // first block's provider) only when the preamble goes out.
            let unnamed: Option<String> = match (session.unnamed_provider(), preamble_held) {
                (Some(p), _) => Some(p.to_owned()),
                (None, true) => None,
                (None, false) => outs.first().map(|b| b.provider.to_owned()),
            };
            let blocks: Vec<String> = outs
                .iter()
                .map(|b| block_bytes(b, &token, unnamed.as_deref()))
                .collect();
            let notes = self::notes(
                turn_no,
                &candidates,
                &labels,
                &included,
                &unchanged,
                &moved,
                &withdrawn,
            );
            let prompt = render::prompt(&blocks, preamble_held, unnamed.as_deref());
            let cost = u64::from(token_cost_of_len(notes.len() + prompt.len()));
            if cost <= budget || blocks.is_empty() {
                break (token, changed, preamble_held, unnamed, blocks, notes);
            }
            match dropping.next() {
                Some(i) => included[i] = false,
                None => break (token, changed, preamble_held, unnamed, blocks, notes),
            }
        };
        // Re-checked frames that did not fit are withdrawn, not kept.
        let mut dropped_recheck = false;
        for (i, c) in candidates.iter().enumerate() {
            if !included[i] && !c.selected {
                if let Some(h) = held.get(&key_of(&c.id)) {
                    dropped_recheck = true;
                    withdrawn.push((
                        h,
                        "it could not be confirmed unchanged and there was no room to send it again; ask again for it".into(),
                    ));
                }
            }
        }
        let prompt = render::prompt(&blocks, preamble_held, unnamed.as_deref());
        let notes = if dropped_recheck {
            self::notes(
                turn_no,
                &candidates,
                &labels,
                &included,
                &unchanged,
                &moved,
                &withdrawn,
            )
        } else {
            notes
        };

        // What was sent, held, reused, withdrawn.
        let mut sent = Vec::new();
        let mut next_held: Vec<HeldFrame> = unchanged
            .iter()
            .chain(kept.iter())
            .map(|h| (*h).clone())
            .chain(moved.iter().map(|m| HeldFrame {
                label: m.label.clone(),
                ..m.held.clone()
            }))
            .collect();
        let mut served: BTreeMap<String, Vec<ServedFrame>> = BTreeMap::new();
        let mut citations = Vec::new();
        let mut block_iter = blocks.iter();
        for (i, c) in candidates.iter().enumerate() {
            if !included[i] {
                continue;
            }
            let bytes = block_iter.next().map_or(0, String::len);
            let tokens = u64::from(token_cost_of_len(bytes));
            sent.push(SentFrame {
                label: labels[i].clone(),
                frame: c.id.clone(),
                tokens,
                why: c.why.clone(),
            });
            next_held.push(HeldFrame {
                frame: c.id.clone(),
                label: labels[i].clone(),
                tokens,
                goal: contextgraph_types::display_text::bounded(&c.goal, state::MAX_TEXT_BYTES / 4),
                turn: turn_no,
                // Kept only whole: a cut URI would name another resource.
                uri: c
                    .provenance
                    .iter()
                    .find_map(|p| p.uri.clone())
                    .filter(|u| u.len() <= state::MAX_TEXT_BYTES),
                declared_digest: c.declared.clone(),
            });
            served
                .entry(c.id.provider_id.clone())
                .or_default()
                .push(ServedFrame {
                    frame: c.id.clone(),
                    token_cost: token_cost_for(c.frame.content.as_deref()),
                });
            citations.push(Citation {
                label: labels[i].clone(),
                frame: c.id.clone(),
                provenance: c.provenance.clone(),
                merged: Vec::new(),
            });
        }
        let provenance_of = |h: &HeldFrame| {
            answer
                .composition
                .citations
                .iter()
                .find(|c| key_of(&c.frame) == key_of(&h.frame))
                .map(|c| c.provenance.clone())
                .unwrap_or_default()
        };
        for h in &unchanged {
            citations.push(Citation {
                label: h.label.clone(),
                frame: h.frame.clone(),
                provenance: provenance_of(h),
                merged: Vec::new(),
            });
        }
        for m in &moved {
            citations.push(Citation {
                label: m.label.clone(),
                frame: m.held.frame.clone(),
                provenance: m.provenance.clone(),
                merged: Vec::new(),
            });
        }
        let usage = call_usage(&answer.composition.usage, served);
        let revalidated = u64::try_from(session.held().len()).unwrap_or(u64::MAX);
        let figures = SessionTotals {
            turns: 1,
            tokens_sent: u64::from(token_cost_of_len(
                notes.len()
                    + if notes.is_empty() || prompt.is_empty() {
                        0
                    } else {
                        1
                    }
                    + prompt.len(),
            )),
            tokens_saved: unchanged
                .iter()
                .copied()
                .chain(moved.iter().filter(|m| m.in_answer).map(|m| m.held))
                .map(|h| h.tokens)
                .sum(),
            frames_sent: u64::try_from(sent.len()).unwrap_or(u64::MAX),
            frames_reused: u64::try_from(
                unchanged.len() + moved.iter().filter(|m| m.in_answer).count(),
            )
            .unwrap_or(u64::MAX),
            frames_revalidated: revalidated,
            frames_withdrawn: u64::try_from(withdrawn.len()).unwrap_or(u64::MAX),
        };
        // The preamble is held once delivered with this token (a changed
        // token sends it again).
        let preamble = preamble_held || !blocks.is_empty();
        let next = session.next(Some(token), preamble, unnamed, next_held, &figures);
        let labelled = |h: &HeldFrame, reason: Option<String>| LabelledFrame {
            label: h.label.clone(),
            frame: h.frame.clone(),
            reason,
        };
        Ok(SessionTurn {
            turn: turn_no,
            notes,
            prompt,
            sent,
            unchanged: unchanged.iter().map(|h| labelled(h, None)).collect(),
            moved: moved
                .iter()
                .map(|m| MovedFrame {
                    label: m.label.clone(),
                    previous: m.held.label.clone(),
                    frame: m.held.frame.clone(),
                })
                .collect(),
            withdrawn: withdrawn
                .iter()
                .map(|(h, r)| labelled(h, Some(r.clone())))
                .collect(),
            citations,
            usage,
            figures,
            totals: next.totals(),
            independent_tokens: u64::from(token_cost_of_len(answer.composition.prompt.len())),
            revalidation,
            token_changed,
            answer,
            next,
        })
    }
}

fn notes(
    turn: u64,
    candidates: &[Candidate<'_>],
    labels: &[String],
    included: &[bool],
    unchanged: &[&HeldFrame],
    moved: &[Moved<'_>],
    withdrawn: &[(&HeldFrame, String)],
) -> String {
    let mut n = Notes {
        turn,
        ..Notes::default()
    };
    for (i, c) in candidates.iter().enumerate() {
        if !included[i] {
            continue;
        }
        match &c.why {
            SendReason::New => {}
            SendReason::Changed { replaces } => {
                n.replaced.push((labels[i].clone(), replaces.clone()))
            }
            SendReason::Unconfirmed { detail, .. } => {
                n.resent.push((labels[i].clone(), detail.clone()))
            }
        }
    }
    n.unchanged = unchanged.iter().map(|h| h.label.clone()).collect();
    n.unchanged.sort();
    n.moved = moved
        .iter()
        .map(|m| (m.label.clone(), m.held.label.clone()))
        .collect();
    n.moved.sort();
    let mut w: Vec<(String, String)> = withdrawn
        .iter()
        .map(|(h, r)| (h.label.clone(), r.clone()))
        .collect();
    w.sort();
    w.dedup();
    n.withdrawn = w;
    n.text()
}
