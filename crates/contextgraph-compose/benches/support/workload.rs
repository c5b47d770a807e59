//! The composition workload shared by the `compose` bench and the
//! `compose_profile` example (callgrind): deterministic, so every run and
//! every tool composes the same frames.

use contextgraph_compose::{sha256_digest, ProviderOutcome};
use contextgraph_types::{ContextFrame, FrameKind, Provenance};

/// A small deterministic generator (xorshift64*), so every run composes the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "fn",
    "retry",
    "policy",
    "backoff",
    "config",
    "impl",
    "struct",
    "let",
    "match",
    "Result<T>",
    "Option<&str>",
    "self",
    "async",
    "await",
    "error",
    "frame",
    "budget",
    "token",
    "provider",
    "query",
    "cache",
    "&mut",
    "vec![]",
    "=>",
    "->",
    "{",
    "}",
    "//",
    "docs",
    "the",
    "of",
    "and",
];

fn body(rng: &mut Rng, n: usize) -> String {
    let mut s = String::with_capacity(n + 16);
    s.push_str(&format!("#{} ", rng.next()));
    while s.len() < n {
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    s
}

/// `n` candidate frames over 8 providers: 20% copy another frame's content,
/// 10% carry a file range overlapping another frame's range on the same file.
pub fn candidates(n: usize) -> Vec<ProviderOutcome> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut frames: Vec<Vec<ContextFrame>> = vec![Vec::new(); 8];
    let mut contents: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let provider = i % 8;
        let content = if i > 0 && rng.below(5) == 0 {
            contents[rng.below(i as u64) as usize].clone()
        } else {
            let len = 1024 + rng.below(1024) as usize;
            body(&mut rng, len)
        };
        let mut f = ContextFrame::new(
            format!("frame-{i:06}"),
            FrameKind::Snippet,
            format!("Snippet {i}"),
            content.clone(),
        );
        f.citation_label = Some(format!("src/file{}.rs #{i}", i % 500));
        f.score = (rng.below(1000) as f32) / 1000.0;
        f.content_digest = Some(sha256_digest(content.as_bytes()));
        let file = format!(
            "file:///repo/src/file{}.rs",
            rng.below((n as u64 / 4).max(1))
        );
        let start = if rng.below(10) == 0 {
            1 + rng.below(20) as u32
        } else {
            1000 + 50 * i as u32
        };
        f.provenance = vec![Provenance {
            kind: Provenance::FILE.to_owned(),
            uri: Some(file),
            range: Some(format!("L{start}-{}", start + 30)),
            digest: f.content_digest.clone(),
            method: None,
            by: None,
        }];
        frames[provider].push(f);
        contents.push(content);
    }
    frames
        .into_iter()
        .enumerate()
        .map(|(p, fs)| ProviderOutcome::accepted(format!("provider-{p}"), fs))
        .collect()
}
