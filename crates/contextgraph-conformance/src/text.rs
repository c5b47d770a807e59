//! The bound on provider-controlled text in a report. The text itself is
//! escaped and cut by the workspace's one display-text policy,
//! [`contextgraph_types::display_text::bounded`], here and in the host suite.

/// Longest single evidence line, in characters: evidence quotes provider
/// text (messages, titles, ids), and a provider must not be able to make the
/// report as large as its answers, nor write control, escape or bidi
/// characters into it.
pub const MAX_EVIDENCE_CHARS: usize = 600;
