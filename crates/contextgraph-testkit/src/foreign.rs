//! A provider that behaves like the other CGP implementations in the wild,
//! for the tests of our host's repair policy and provider keys.
//!
//! Other implementations answer with faults our own providers never make.
//! Each is one [`Foreign`] behaviour here, switched on by name, and applied
//! on top of an otherwise honest answer so a test sees that fault and no other:
//!
//! - `file-digest`: `content_digest` is the digest of the whole backing
//!   file, not of the frame's inline excerpt (D1);
//! - `placeholder-digest`: `content_digest` is `sha256:1111…` (D1);
//! - `short-ranges`: one-line ranges written `L10`, not `L10-10` (F5);
//! - `ignore-max-frames`: every frame is sent whatever `max_frames` says
//!   (B4; still within `max_tokens`, so B1 holds).
//!
//! Its name is chosen with `--name`, so two instances can announce the same
//! one. It declares `verify` and answers it like those implementations do:
//! by frame id and against the digest *it* declares (whatever the
//! `provider_id`, which is the host's key), so a host that talks back with
//! its own recomputed digest gets `stale`.
//!
//! [`main`] runs it on stdio with the SDK's honesty guard off (the guard
//! would refuse every one of these answers); a crate's fixture `[[bin]]`
//! calls it. In-process, [`ForeignProvider`] is a plain SDK [`Provider`].

use std::fmt;
use std::str::FromStr;

use contextgraph_provider_sdk::{
    pack, sha256_digest, FrameBuilder, Provider, ProviderError, ServeOptions,
};
use contextgraph_types::{
    Capabilities, ContextFrame, ContextQuery, ContextQueryResult, DataFlow, EgressScope, FrameKind,
    FrameVerdict, Provenance, ProviderInfo, QueryCapability, Verdict, VerifyRequest,
    VerifyResponse,
};

/// The digest `placeholder-digest` declares for every frame.
pub const PLACEHOLDER_DIGEST: &str =
    "sha256:1111111111111111111111111111111111111111111111111111111111111111";

/// The URI of the one file the provider serves excerpts of. It is not read
/// from disk: the text is [`FILE_TEXT`].
pub const FILE_URI: &str = "file:///cgp-foreign-fixture/src/retry.rs";

/// The backing file's text.
pub const FILE_TEXT: &str = "\
/// Retries a request with exponential backoff.
pub fn retry_with_backoff(attempts: u32) -> u32 {
    attempts * 2
}

/// The delay before the next retry, doubled each time.
pub const BASE_DELAY_MS: u64 = 100;

/// How many times a request is tried at most.
pub const MAX_ATTEMPTS: u32 = 5;
";

/// The excerpts served: `(id, first line, last line)`; two are one line long.
const EXCERPTS: [(&str, u32, u32); 4] = [
    ("retry_with_backoff", 1, 4),
    ("BASE_DELAY_MS", 7, 7),
    ("MAX_ATTEMPTS", 10, 10),
    ("delay-doc", 5, 6),
];

/// One foreign behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// `content_digest` = digest of the whole file (D1).
    FileDigest,
    /// `content_digest` = [`PLACEHOLDER_DIGEST`] (D1).
    PlaceholderDigest,
    /// One-line ranges written `L<n>` (F5).
    ShortRanges,
    /// Every frame whatever `max_frames` says (B4).
    IgnoreMaxFrames,
}

impl Foreign {
    /// Every behaviour.
    pub const ALL: [Foreign; 4] = [
        Foreign::FileDigest,
        Foreign::PlaceholderDigest,
        Foreign::ShortRanges,
        Foreign::IgnoreMaxFrames,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Foreign::FileDigest => "file-digest",
            Foreign::PlaceholderDigest => "placeholder-digest",
            Foreign::ShortRanges => "short-ranges",
            Foreign::IgnoreMaxFrames => "ignore-max-frames",
        }
    }
}

impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Foreign {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Foreign::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Foreign::ALL.iter().map(|b| b.name()).collect();
                format!("unknown behaviour {s:?}; known: {}", names.join(", "))
            })
    }
}

/// The foreign provider: announces `name`, serves excerpts of [`FILE_TEXT`]
/// with the chosen behaviours.
#[derive(Debug, Clone)]
pub struct ForeignProvider {
    name: String,
    behaviours: Vec<Foreign>,
}

impl ForeignProvider {
    /// A provider announcing `name` with `behaviours`.
    pub fn new(name: impl Into<String>, behaviours: &[Foreign]) -> Self {
        ForeignProvider {
            name: name.into(),
            behaviours: behaviours.to_vec(),
        }
    }

    fn has(&self, b: Foreign) -> bool {
        self.behaviours.contains(&b)
    }

    /// The digest this provider declares for `frame` (what its `verify`
    /// accepts): the honest one unless a digest behaviour replaces it.
    pub fn declared_digest(&self, frame: &ContextFrame) -> Option<String> {
        if self.has(Foreign::PlaceholderDigest) {
            Some(PLACEHOLDER_DIGEST.to_owned())
        } else if self.has(Foreign::FileDigest) {
            Some(sha256_digest(FILE_TEXT.as_bytes()))
        } else {
            frame.content_digest.clone()
        }
    }

    /// Every frame, honest in every respect.
    pub fn honest_frames() -> Vec<ContextFrame> {
        EXCERPTS
            .iter()
            .enumerate()
            .map(|(i, (id, start, end))| {
                let content = lines(*start, *end);
                let range = format!("L{start}-{end}");
                let mut frame = FrameBuilder::new(
                    *id,
                    FrameKind::Snippet,
                    format!("retry.rs {range}"),
                    content.clone(),
                )
                .uri(FILE_URI)
                .citation_label(format!("retry.rs {range}"))
                .score(0.9 - 0.1 * i as f32)
                .build();
                frame.provenance.push(Provenance {
                    kind: Provenance::FILE.to_owned(),
                    uri: Some(FILE_URI.to_owned()),
                    range: Some(range),
                    digest: Some(sha256_digest(content.as_bytes())),
                    ..Provenance::default()
                });
                frame
            })
            .collect()
    }

    /// Apply the behaviours to an honest frame.
    fn foreign(&self, mut frame: ContextFrame) -> ContextFrame {
        frame.content_digest = self.declared_digest(&frame);
        if self.has(Foreign::ShortRanges) {
            for p in &mut frame.provenance {
                if let Some((start, end)) = p.range.as_deref().and_then(parse_range) {
                    if start == end {
                        p.range = Some(format!("L{start}"));
                    }
                }
            }
        }
        frame
    }
}

/// Lines `start..=end` (1-based) of [`FILE_TEXT`], each with its `\n`.
fn lines(start: u32, end: u32) -> String {
    FILE_TEXT
        .split_inclusive('\n')
        .skip(start.saturating_sub(1) as usize)
        .take((end - start + 1) as usize)
        .collect()
}

fn parse_range(r: &str) -> Option<(u32, u32)> {
    let (a, b) = r.strip_prefix('L')?.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

impl Provider for ForeignProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: self.name.clone(),
            version: "0.9.0".to_owned(),
            data_flow: DataFlow {
                reads: true,
                writes: false,
                egress: false,
                egress_scopes: vec![EgressScope::LocalOnly],
            },
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Snippet],
            },
            verify: true,
            ..Capabilities::default()
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        let mut bounds = query.clone();
        if self.has(Foreign::IgnoreMaxFrames) {
            bounds.max_frames = u32::MAX;
        }
        let mut result = pack(Self::honest_frames(), &bounds);
        result.frames = result.frames.into_iter().map(|f| self.foreign(f)).collect();
        Ok(result)
    }

    /// By frame id, against the digest this provider declares, whatever
    /// the `provider_id` (the host's key, which it cannot know).
    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        let frames = Self::honest_frames();
        VerifyResponse {
            verdicts: request
                .frames
                .iter()
                .map(|id| {
                    let verdict = match frames.iter().find(|f| f.id == id.frame_id) {
                        None => Verdict::Gone,
                        Some(f) => {
                            let current = self.declared_digest(f);
                            if id.content_digest == current {
                                Verdict::Valid
                            } else {
                                Verdict::Stale {
                                    replacement_digest: current,
                                }
                            }
                        }
                    };
                    FrameVerdict {
                        frame: id.clone(),
                        verdict,
                    }
                })
                .collect(),
        }
    }
}

/// Parse `--name NAME` and `--behave a,b,…` (both optional; the default
/// name is `foreign-provider`).
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<ForeignProvider, String> {
    let mut name = "foreign-provider".to_owned();
    let mut behaviours = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--name" => name = args.next().ok_or("--name needs a value")?,
            "--behave" => {
                let list = args.next().ok_or("--behave needs a value")?;
                for b in list.split(',').filter(|b| !b.is_empty()) {
                    behaviours.push(b.parse()?);
                }
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(ForeignProvider::new(name, &behaviours))
}

/// Run the provider on stdio with this process's arguments (honesty guard
/// off). Exit code 0 after `shutdown`, 2 on a usage error, 1 on an I/O error.
pub fn main() -> std::process::ExitCode {
    let provider = match parse_args(std::env::args().skip(1)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("foreign provider: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let options = ServeOptions::default().with_honesty(false);
    match contextgraph_provider_sdk::serve_stdio_with(provider, options) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("foreign provider: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::validate::Anchor;

    fn answer(behaviours: &[Foreign], max_frames: u32) -> ContextQueryResult {
        let q = ContextQuery::new("retry backoff", max_frames, 4000);
        ForeignProvider::new("f", behaviours).query(&q).unwrap()
    }

    fn anchors(result: &ContextQueryResult, max_frames: u32) -> Vec<Anchor> {
        let q = ContextQuery::new("retry backoff", max_frames, 4000);
        let mut a: Vec<Anchor> = result
            .validate_with(&q, &contextgraph_provider_sdk::Sha256Hasher)
            .into_iter()
            .map(|v| v.anchor)
            .collect();
        a.sort();
        a.dedup();
        a
    }

    #[test]
    fn with_no_behaviour_the_answer_is_honest() {
        let r = answer(&[], 10);
        assert_eq!(r.frames.len(), EXCERPTS.len());
        assert!(anchors(&r, 10).is_empty(), "{:?}", anchors(&r, 10));
    }

    #[test]
    fn each_behaviour_breaks_exactly_its_rule() {
        for (b, max_frames, rule) in [
            (Foreign::FileDigest, 10, Anchor::D1),
            (Foreign::PlaceholderDigest, 10, Anchor::D1),
            (Foreign::ShortRanges, 10, Anchor::F5),
            (Foreign::IgnoreMaxFrames, 2, Anchor::B4),
        ] {
            let r = answer(&[b], max_frames);
            assert_eq!(anchors(&r, max_frames), vec![rule], "{b}");
        }
    }

    #[test]
    fn verify_accepts_its_own_digest_under_any_provider_id() {
        let p = ForeignProvider::new("f", &[Foreign::FileDigest]);
        let served = answer(&[Foreign::FileDigest], 10).frames.remove(0);
        let mut id = served.frame_id("some-host-key");
        let response = p.verify(&VerifyRequest {
            frames: vec![id.clone()],
        });
        assert_eq!(response.verdict_for(&id), Verdict::Valid);
        id.content_digest = Some(sha256_digest(served.content.unwrap().as_bytes()));
        let response = p.verify(&VerifyRequest {
            frames: vec![id.clone()],
        });
        assert!(matches!(response.verdict_for(&id), Verdict::Stale { .. }));
    }

    #[test]
    fn arguments_name_the_provider_and_its_behaviours() {
        let p = parse_args(
            ["--name", "docs", "--behave", "file-digest,short-ranges"].map(String::from),
        )
        .unwrap();
        assert_eq!(p.info().name, "docs");
        assert_eq!(p.behaviours, [Foreign::FileDigest, Foreign::ShortRanges]);
        assert!(parse_args(["--behave", "nope"].map(String::from)).is_err());
    }
}
