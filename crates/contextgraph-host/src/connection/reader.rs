//! The read loop: lines off the provider's output, noise counted in
//! [`Diagnostics`], replies handed to the router.

use std::collections::VecDeque;
use std::sync::Arc;

use contextgraph_codec::{AsyncLineReader, FrameError};
use tokio::io::AsyncRead;

use super::router::{route, Shared};
use super::CloseReason;
use crate::line_watch::LineWatch;

/// What the reader saw that was not a reply. All counters are cumulative.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Lines that were not JSON envelopes.
    pub garbage_lines: u64,
    /// Lines over the cap, dropped unread.
    pub oversized_lines: u64,
    /// Envelopes of a type this host does not know (ignored, §1).
    pub unknown_envelopes: u64,
    /// Replies to requests that had already timed out, discarded.
    pub late_replies: u64,
    /// Replies that matched no outstanding request, discarded.
    pub unattributable_replies: u64,
    /// The most recent notes (at most 16), shortened and escaped.
    pub recent: VecDeque<String>,
}

impl Diagnostics {
    const MAX_NOTES: usize = 16;

    pub(super) fn note(&mut self, text: String) {
        if self.recent.len() == Self::MAX_NOTES {
            self.recent.pop_front();
        }
        self.recent.push_back(text);
    }
}

pub(super) async fn read_loop<R: AsyncRead + Unpin>(
    mut lines: AsyncLineReader<LineWatch<R>>,
    shared: Arc<Shared>,
) {
    loop {
        match lines.next_line().await {
            None => {
                shared.close(CloseReason::EndOfOutput, None);
                return;
            }
            Some(Err(FrameError::Oversized {
                discarded_bytes, ..
            })) => {
                let mut r = shared.lock();
                r.diag.oversized_lines += 1;
                r.diag.note(format!(
                    "dropped a {discarded_bytes}-byte line over the cap"
                ));
            }
            Some(Err(_)) if shared.open_line.tripped() => {
                shared.close_runaway();
                return;
            }
            Some(Err(e)) => {
                shared.close(CloseReason::Io(e.to_string()), None);
                return;
            }
            Some(Ok(line)) => route(&shared, line),
        }
    }
}
