//! Attribution records (A1–A3): which frames were selected, rendered into
//! the prompt, and cited by the model's output.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::identity::FrameId;
use crate::usage::UsageReport;

/// One frame's attribution, keyed by its FrameId (A1), with three
/// independent booleans (A2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AttributionRecord {
    /// The frame (A1).
    pub frame: FrameId,
    /// Chosen by composition.
    pub selected: bool,
    /// Written into the prompt.
    pub rendered: bool,
    /// Referred to by the model's output.
    pub cited: bool,
}

/// Why an attribution record is incoherent (A3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributionError {
    /// `cited` without `rendered`: the model cannot cite what it never saw.
    CitedButNotRendered(FrameId),
    /// `rendered` without `selected`.
    RenderedButNotSelected(FrameId),
    /// The record names a frame the usage report did not bill.
    NotBilled(FrameId),
}

impl fmt::Display for AttributionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttributionError::CitedButNotRendered(id) => {
                write!(f, "A3: {id} is cited but was never rendered")
            }
            AttributionError::RenderedButNotSelected(id) => {
                write!(f, "A3: {id} is rendered but was never selected")
            }
            AttributionError::NotBilled(id) => write!(
                f,
                "A3: {id} is attributed but the usage report did not bill it"
            ),
        }
    }
}

impl std::error::Error for AttributionError {}

impl AttributionRecord {
    /// A3: cited ⇒ rendered ⇒ selected, and a selected frame is one the usage report billed.
    pub fn check(&self, usage: &UsageReport) -> Result<(), AttributionError> {
        if self.cited && !self.rendered {
            return Err(AttributionError::CitedButNotRendered(self.frame.clone()));
        }
        if self.rendered && !self.selected {
            return Err(AttributionError::RenderedButNotSelected(self.frame.clone()));
        }
        if self.selected && !usage.bills(&self.frame) {
            return Err(AttributionError::NotBilled(self.frame.clone()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::{ProviderUsage, ServedFrame};

    #[test]
    fn coherence_follows_cited_rendered_selected_billed() {
        let id = FrameId::new("p", "a", None);
        let usage = UsageReport::from_providers(
            10,
            None,
            vec![ProviderUsage {
                provider_id: "p".into(),
                served_frames: vec![ServedFrame {
                    frame: id.clone(),
                    token_cost: 3,
                }],
                ..ProviderUsage::default()
            }],
        );
        let rec = |selected, rendered, cited| AttributionRecord {
            frame: id.clone(),
            selected,
            rendered,
            cited,
        };
        assert!(rec(true, true, true).check(&usage).is_ok());
        assert!(rec(true, false, false).check(&usage).is_ok());
        assert!(rec(false, false, false).check(&usage).is_ok());
        assert!(matches!(
            rec(true, false, true).check(&usage),
            Err(AttributionError::CitedButNotRendered(_))
        ));
        assert!(matches!(
            rec(false, true, false).check(&usage),
            Err(AttributionError::RenderedButNotSelected(_))
        ));
        let other = AttributionRecord {
            frame: FrameId::new("p", "zzz", None),
            selected: true,
            rendered: false,
            cited: false,
        };
        assert!(matches!(
            other.check(&usage),
            Err(AttributionError::NotBilled(_))
        ));
    }
}
