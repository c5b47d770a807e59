//! Sessions of the MCP server: what each conversation's model already holds.
//!
//! Every MCP connection has a session of its own, and a `get_context` call
//! may name further ones (`session` argument) within its connection. The
//! server only names sessions ([`session_key`]); the state itself belongs to
//! the [`ContextService`](crate::ContextService), which keeps it in
//! [`SessionSlots`].
//!
//! # Stage, then commit
//!
//! A turn is computed from the committed state and *staged*; it becomes the
//! state only when the server commits it, after it decided to send that
//! result (a result over the size cap is recomposed, and the discarded
//! attempt must not count as delivered). A stage computed from a state that
//! has since moved on (two calls of one session at once) is dropped at
//! commit: the state then under-reports what the model holds, which costs a
//! resend later, never a frame wrongly called unchanged.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Mutex;

/// Most sessions one server keeps; the least recently used is forgotten
/// (its conversation is then sent everything again).
pub const MAX_SESSIONS: usize = 64;

static CONNECTIONS: AtomicU64 = AtomicU64::new(1);

/// A fresh connection number, unique in this process.
pub fn next_connection() -> u64 {
    CONNECTIONS.fetch_add(1, Ordering::Relaxed)
}

/// The key of the session for `connection` and an optional session `name`.
pub fn session_key(connection: u64, name: Option<&str>) -> String {
    match name {
        None => format!("{connection}"),
        Some(n) => format!("{connection}/{n}"),
    }
}

struct Slot<S> {
    state: S,
    version: u64,
    pending: Option<(u64, u64, S)>,
    used: u64,
}

struct Inner<S> {
    slots: HashMap<String, Slot<S>>,
    clock: u64,
    tickets: u64,
}

/// A bounded map of session states, with staged turns (see the module docs).
pub struct SessionSlots<S> {
    inner: Mutex<Inner<S>>,
}

impl<S: Clone + Default> Default for SessionSlots<S> {
    fn default() -> Self {
        SessionSlots {
            inner: Mutex::new(Inner {
                slots: HashMap::new(),
                clock: 0,
                tickets: 0,
            }),
        }
    }
}

/// The committed state of a session, and what to stage against.
#[derive(Debug, Clone)]
pub struct Snapshot<S> {
    /// The state (a copy).
    pub state: S,
    version: u64,
}

impl<S: Clone + Default> SessionSlots<S> {
    /// No sessions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The committed state of `key` (a new session when unknown).
    pub async fn snapshot(&self, key: &str) -> Snapshot<S> {
        let mut inner = self.inner.lock().await;
        inner.clock += 1;
        let clock = inner.clock;
        if !inner.slots.contains_key(key) && inner.slots.len() >= MAX_SESSIONS {
            if let Some(oldest) = inner
                .slots
                .iter()
                .min_by_key(|(_, s)| s.used)
                .map(|(k, _)| k.clone())
            {
                inner.slots.remove(&oldest);
            }
        }
        let slot = inner.slots.entry(key.to_owned()).or_insert_with(|| Slot {
            state: S::default(),
            version: 0,
            pending: None,
            used: clock,
        });
        slot.used = clock;
        Snapshot {
            state: slot.state.clone(),
            version: slot.version,
        }
    }

    /// Stage `next`, computed from `from`; returns the ticket to commit it with.
    pub async fn stage(&self, key: &str, from: &Snapshot<S>, next: S) -> u64 {
        let mut inner = self.inner.lock().await;
        inner.tickets += 1;
        let ticket = inner.tickets;
        if let Some(slot) = inner.slots.get_mut(key) {
            slot.pending = Some((ticket, from.version, next));
        }
        ticket
    }

    /// Make the turn staged under `ticket` the session's state. Returns
    /// whether it was applied (false: a later stage replaced it, the state
    /// moved on, or the session was forgotten).
    pub async fn commit(&self, key: &str, ticket: u64) -> bool {
        let mut inner = self.inner.lock().await;
        let Some(slot) = inner.slots.get_mut(key) else {
            return false;
        };
        match slot.pending.take() {
            Some((t, base, next)) if t == ticket && base == slot.version => {
                slot.state = next;
                slot.version += 1;
                true
            }
            other => {
                slot.pending = other.filter(|(t, _, _)| *t != ticket);
                false
            }
        }
    }

    /// How many sessions are kept.
    pub async fn len(&self) -> usize {
        self.inner.lock().await.slots.len()
    }

    /// Whether no session is kept.
    pub async fn is_empty(&self) -> bool {
        self.len().await == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_a_committed_stage_becomes_the_state() {
        let slots: SessionSlots<u32> = SessionSlots::new();
        let s = slots.snapshot("1").await;
        let discarded = slots.stage("1", &s, 5).await;
        let kept = slots.stage("1", &s, 7).await;
        assert!(!slots.commit("1", discarded).await);
        assert_eq!(slots.snapshot("1").await.state, 0);
        assert!(slots.commit("1", kept).await);
        assert_eq!(slots.snapshot("1").await.state, 7);
        assert!(!slots.commit("1", kept).await, "a ticket applies once");
    }

    #[tokio::test]
    async fn a_stage_from_an_outdated_state_is_dropped() {
        let slots: SessionSlots<u32> = SessionSlots::new();
        let a = slots.snapshot("1").await;
        let b = slots.snapshot("1").await;
        let ta = slots.stage("1", &a, 1).await;
        assert!(slots.commit("1", ta).await);
        let tb = slots.stage("1", &b, 2).await;
        assert!(!slots.commit("1", tb).await);
        assert_eq!(slots.snapshot("1").await.state, 1);
    }

    #[tokio::test]
    async fn sessions_are_bounded_least_recently_used_first() {
        let slots: SessionSlots<u32> = SessionSlots::new();
        for n in 0..=MAX_SESSIONS {
            let s = slots.snapshot(&n.to_string()).await;
            let t = slots.stage(&n.to_string(), &s, 9).await;
            slots.commit(&n.to_string(), t).await;
        }
        assert_eq!(slots.len().await, MAX_SESSIONS);
        assert_eq!(
            slots.snapshot("0").await.state,
            0,
            "the oldest was forgotten"
        );
        assert_eq!(slots.snapshot(&MAX_SESSIONS.to_string()).await.state, 9);
    }

    #[test]
    fn keys_scope_names_to_their_connection() {
        assert_ne!(session_key(1, Some("a")), session_key(2, Some("a")));
        assert_ne!(session_key(1, None), session_key(1, Some("a")));
    }
}
