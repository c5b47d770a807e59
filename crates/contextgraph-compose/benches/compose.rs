//! Composition and fencing speed.
//!
//! - `compose/{stable,ranked}/N`: N candidate frames of 1–2 KB from 8
//!   providers, 20% duplicated content, 10% overlapping file ranges, composed
//!   into an 8,000-model-token prompt. Linear in N is the claim (1k / 10k / 100k).
//! - `fence/*`: escaping 2 MB of content, CJK markup dense with `<` and
//!   multi-byte characters, and plain source code.

use contextgraph_compose::fence::escape_content_into;
use contextgraph_compose::{compose, sha256_digest, Budget, Options, Placement, ProviderOutcome};
use contextgraph_types::{ContextFrame, FrameKind, Provenance};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

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
fn candidates(n: usize) -> Vec<ProviderOutcome> {
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

fn bench_compose(c: &mut Criterion) {
    let mut group = c.benchmark_group("compose");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(2));
    for n in [1_000usize, 10_000, 100_000] {
        let outcomes = candidates(n);
        group.throughput(Throughput::Elements(n as u64));
        for (name, placement) in [("stable", Placement::Stable), ("ranked", Placement::Ranked)] {
            if placement == Placement::Ranked && n != 10_000 {
                continue;
            }
            let options = Options::new(Budget::model_tokens(8000)).with_placement(placement);
            group.bench_with_input(BenchmarkId::new(name, n), &outcomes, |b, outcomes| {
                b.iter(|| compose(black_box(outcomes), &options).map(|c| c.prompt.len()))
            });
        }
    }
    group.finish();
}

fn cjk_markup(bytes: usize) -> String {
    let unit = "<p class=\"note\">日本語のテキストと中文内容、한국어 &amp; ＜全角＞</p>\n<li>項目 &lt;1&gt; 〈注〉</li>\n";
    unit.repeat(bytes / unit.len() + 1)
}

fn source_code(bytes: usize) -> String {
    let unit = "pub fn retry<T, E>(policy: &RetryPolicy, mut op: impl FnMut() -> Result<T, E>) -> Result<T, E> {\n    let mut delay = policy.backoff_ms;\n    for attempt in 0..policy.max_attempts {\n        match op() {\n            Ok(v) => return Ok(v),\n            Err(e) if attempt + 1 == policy.max_attempts => return Err(e),\n            Err(_) => { sleep(delay); delay *= 2; }\n        }\n    }\n    unreachable!()\n}\n";
    unit.repeat(bytes / unit.len() + 1)
}

fn bench_fence(c: &mut Criterion) {
    let mut group = c.benchmark_group("fence");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for (name, content) in [
        ("cjk_markup_2mb", cjk_markup(2 << 20)),
        ("source_code_2mb", source_code(2 << 20)),
    ] {
        group.throughput(Throughput::Bytes(content.len() as u64));
        let mut out = String::with_capacity(content.len() * 2);
        group.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                escape_content_into(black_box(&content), &mut out);
                out.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_compose, bench_fence);
criterion_main!(benches);
