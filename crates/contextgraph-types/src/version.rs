//! Protocol version strings and the family rule (H1, H3).
//!
//! Grammar: `"contextgraph/" 1*DIGIT "." 1*DIGIT [ "-draft" ]`. The *major
//! family* is the text before the first `.`; two versions interoperate iff
//! their families are equal. A string outside the grammar interoperates with
//! nothing — not even itself — so a typo can never pass as compatible.

use std::fmt;

/// The protocol version this crate implements.
pub const PROTOCOL_VERSION: &str = "contextgraph/1.0-draft";

const PREFIX: &str = "contextgraph/";

/// A parsed, grammar-valid protocol version string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProtocolVersion {
    /// Major number: versions interoperate iff this is equal.
    pub major: u64,
    /// Minor number.
    pub minor: u64,
    /// `-draft` suffix: a not-yet-frozen version. It never affects interop.
    pub draft: bool,
}

impl ProtocolVersion {
    /// Parse a version string, returning `None` when it does not match the grammar.
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix(PREFIX)?;
        let (rest, draft) = match rest.strip_suffix("-draft") {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let (major, minor) = rest.split_once('.')?;
        Some(Self {
            major: parse_digits(major)?,
            minor: parse_digits(minor)?,
            draft,
        })
    }

    /// The major family, e.g. `contextgraph/1`.
    pub fn family(&self) -> String {
        format!("{PREFIX}{}", self.major)
    }

    /// Whether two versions interoperate (same major family).
    pub fn interoperates_with(&self, other: &ProtocolVersion) -> bool {
        self.major == other.major
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}.{}", self.major, self.minor)?;
        if self.draft {
            f.write_str("-draft")?;
        }
        Ok(())
    }
}

fn parse_digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The major family of a grammar-valid version string (`contextgraph/1` for
/// `contextgraph/1.0-draft`), or `None` when the string is not a version.
///
/// Returns a slice of the input so callers can compare families without allocating.
pub fn protocol_family(version: &str) -> Option<&str> {
    ProtocolVersion::parse(version)?;
    version.split_once('.').map(|(family, _)| family)
}

/// Whether two version strings interoperate: both match the grammar and share
/// a major family. `contextgraph/1.0-draft` and `contextgraph/1.7` do;
/// `contextgraph/2.0` and anything in family 1 do not; a malformed string
/// interoperates with nothing.
pub fn versions_compatible(a: &str, b: &str) -> bool {
    match (ProtocolVersion::parse(a), ProtocolVersion::parse(b)) {
        (Some(a), Some(b)) => a.interoperates_with(&b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_interoperate_within_a_major_only() {
        assert!(versions_compatible(PROTOCOL_VERSION, "contextgraph/1.0"));
        assert!(versions_compatible(PROTOCOL_VERSION, "contextgraph/1.9"));
        assert!(versions_compatible(
            "contextgraph/1.12",
            "contextgraph/1.3-draft"
        ));
        assert!(!versions_compatible(PROTOCOL_VERSION, "contextgraph/2.0"));
        assert!(!versions_compatible(
            "contextgraph/10.0",
            "contextgraph/1.0"
        ));
    }

    #[test]
    fn strings_outside_the_grammar_interoperate_with_nothing() {
        for bad in [
            "contextgraph/1",
            "contextgraph/1.",
            "contextgraph/.1",
            "contextgraph/1.0-beta",
            "contextgraph/1.0-draft-draft",
            "ContextGraph/1.0",
            "mcp/1.0",
            "contextgraph/1.x",
            "contextgraph/+1.0",
            " contextgraph/1.0",
            "",
        ] {
            assert!(ProtocolVersion::parse(bad).is_none(), "{bad:?} parsed");
            assert!(!versions_compatible(bad, PROTOCOL_VERSION), "{bad:?}");
            assert!(!versions_compatible(bad, bad), "{bad:?} matched itself");
        }
    }

    #[test]
    fn parse_and_display_round_trip() {
        let v = ProtocolVersion::parse(PROTOCOL_VERSION).unwrap();
        assert_eq!(
            v,
            ProtocolVersion {
                major: 1,
                minor: 0,
                draft: true
            }
        );
        assert_eq!(v.to_string(), PROTOCOL_VERSION);
        assert_eq!(v.family(), "contextgraph/1");
        assert_eq!(protocol_family(PROTOCOL_VERSION), Some("contextgraph/1"));
        assert_eq!(protocol_family("nonsense"), None);
    }
}
