//! Speed of the docs provider's hot paths:
//! - `sections/markdown_1mib`: sectioning a 1 MiB Markdown file;
//! - `score/bm25_2000_sections`: ranking 2 000 sections for a 3-term query;
//! - `provider/open_200_files`: a cold start (walk + read + index 200 files);
//! - `provider/query_200_files_unchanged`: one query, including the
//!   per-query refresh that finds nothing changed — the ratio to the cold
//!   start is what "refreshed cheaply" means.

use std::hint::black_box;

use contextgraph_provider_docs::score::{bm25, query_terms, SectionTerms};
use contextgraph_provider_docs::sections::{split_sections, Syntax};
use contextgraph_provider_docs::{DocsConfig, DocsProvider};
use contextgraph_provider_sdk::Provider;
use contextgraph_types::ContextQuery;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// A Markdown document of about `bytes` bytes: headings of both styles,
/// paragraphs and fenced code blocks containing `#` lines.
fn document(bytes: usize, seed: usize) -> String {
    let words = [
        "retry",
        "policy",
        "backoff",
        "timeout",
        "connection",
        "limit",
        "logging",
        "config",
        "delay",
        "attempt",
    ];
    let mut out = String::with_capacity(bytes + 256);
    let mut i = seed;
    while out.len() < bytes {
        if i.is_multiple_of(3) {
            out.push_str(&format!(
                "Section {i} {}\n----------\n\n",
                words[i % words.len()]
            ));
        } else {
            out.push_str(&format!(
                "## Section {i} {}\n\n",
                words[(i * 7) % words.len()]
            ));
        }
        for line in 0..6 {
            let sentence: Vec<&str> = (0..12)
                .map(|w| words[(i + line * 3 + w * 5) % words.len()])
                .collect();
            out.push_str(&sentence.join(" "));
            out.push('\n');
        }
        out.push_str("\n```sh\n# a comment, not a heading\nrun --retries 3\n```\n\n");
        i += 1;
    }
    out
}

fn sectioning(c: &mut Criterion) {
    let text = document(1 << 20, 0);
    let mut group = c.benchmark_group("sections");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("markdown_1mib", |b| {
        b.iter(|| split_sections(black_box(&text), "bench.md", Syntax::Markdown))
    });
    group.finish();
}

fn scoring(c: &mut Criterion) {
    let text = document(1 << 20, 1);
    let sections = split_sections(&text, "bench.md", Syntax::Markdown);
    let stats: Vec<SectionTerms> = sections
        .iter()
        .take(2000)
        .map(|s| SectionTerms::new(&s.title, s.text(&text)))
        .collect();
    let refs: Vec<&SectionTerms> = stats.iter().collect();
    let terms = query_terms("how do I configure the retry backoff?");
    let mut group = c.benchmark_group("score");
    group.bench_function(format!("bm25_{}_sections", refs.len()), |b| {
        b.iter(|| bm25(black_box(&terms), black_box(&refs)))
    });
    group.finish();
}

fn provider(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..200 {
        let path = dir.path().join(format!("d{}/doc{i}.md", i % 10));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, document(4 * 1024, i)).expect("write");
    }
    let config = DocsConfig::new(dir.path());
    let mut group = c.benchmark_group("provider");
    group.sample_size(20);
    group.bench_function("open_200_files", |b| {
        b.iter(|| DocsProvider::open(config.clone()).expect("open"))
    });
    let provider = DocsProvider::open(config).expect("open");
    let query = ContextQuery::new("how do I configure the retry backoff?", 10, 4000);
    group.bench_function("query_200_files_unchanged", |b| {
        b.iter(|| provider.query(black_box(&query)).expect("query"))
    });
    group.finish();
}

criterion_group!(benches, sectioning, scoring, provider);
criterion_main!(benches);
