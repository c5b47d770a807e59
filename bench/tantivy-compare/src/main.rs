//! Our BM25 index (contextgraph-provider-workspace, format v2) against
//! tantivy on the same chunks, the same tokens and the same queries.
//!
//! `cargo run --release -- quality` — recall@5 / MRR@10 on the crate's
//! quality-eval corpus and query set (`$CGP_QUALITY_CORPUS`, default as in
//! `benches/retrieval_quality.rs`).
//!
//! `cargo run --release -- perf` — build time, size, load time, query
//! latency and load-process peak RSS on the `index_perf` corpus
//! (`$CGP_BENCH_CORPUS`, default `~/.cargo/registry/src`).
//!
//! See README.md for what is compared and the numbers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use contextgraph_provider_sdk::Provider;
use contextgraph_provider_workspace::bench_internals::chunk_own_text;
use contextgraph_provider_workspace::chunk::{chunk_file, LineIndex};
use contextgraph_provider_workspace::index::{build_chunk_records, sha256, FileRecord, Index};
use contextgraph_provider_workspace::store::{cache_dir_for, Store};
use contextgraph_provider_workspace::tokenize::{distinct_tokens, tokens};
use contextgraph_provider_workspace::walk::{content_gate, walk, SkipReason, WalkOptions};
use contextgraph_provider_workspace::{
    CacheLocation, Language, WorkspaceOptions, WorkspaceProvider,
};
use contextgraph_types::{ContextQuery, Timestamp};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST};
use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy::{doc, Index as TIndex, IndexWriter, TantivyDocument, Term};

/// Mirrors `rank.rs`.
const K1: f32 = 1.2;
const B: f32 = 0.75;
const MAX_QUERY_TERMS: usize = 32;

// ---------------------------------------------------------------------------
// Tokeniser: the provider's own `tokenize::tokens`, wrapped for tantivy.

#[derive(Clone, Default)]
struct CgpTokenizer {
    tokens: Vec<Token>,
}

struct CgpStream<'a> {
    tokens: &'a mut Vec<Token>,
    at: usize,
}

impl Tokenizer for CgpTokenizer {
    type TokenStream<'a> = CgpStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CgpStream<'a> {
        self.tokens.clear();
        let mut position = 0;
        tokens(text, |t| {
            self.tokens.push(Token {
                offset_from: 0,
                offset_to: 0,
                position,
                text: t.to_owned(),
                position_length: 1,
            });
            position += 1;
        });
        CgpStream {
            tokens: &mut self.tokens,
            at: 0,
        }
    }
}

impl TokenStream for CgpStream<'_> {
    fn advance(&mut self) -> bool {
        self.at += 1;
        self.at <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.at - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at - 1]
    }
}

// ---------------------------------------------------------------------------
// Chunking, exactly as the provider does it (`provider.rs::index_file`).

struct Corpus {
    records: Vec<FileRecord>,
    /// Per indexed chunk, in record order: frame id and own text.
    docs: Vec<(String, String)>,
}

fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

fn chunk_corpus(root: &Path) -> Corpus {
    let options = WalkOptions::default();
    let w = walk(root, &options);
    let now = Timestamp::now();
    let mut records = Vec::new();
    let mut docs = Vec::new();
    for f in w.files {
        let Ok(bytes) = std::fs::read(&f.abs_path) else {
            continue;
        };
        let language = Language::detect(&f.rel_path);
        let mut record = FileRecord {
            rel_path: f.rel_path.clone(),
            content_hash: sha256(&bytes),
            size: bytes.len() as u64,
            mtime_ns: f.mtime.map(nanos),
            language,
            skipped: None,
            chunks: Vec::new(),
        };
        if bytes.len() as u64 > options.max_file_bytes {
            record.skipped = Some(SkipReason::TooLarge);
        } else {
            match content_gate(&bytes) {
                Err(reason) => record.skipped = Some(reason),
                Ok(text) => {
                    let chunks = chunk_file(&f.rel_path, language, text);
                    let lines = LineIndex::new(text);
                    for c in &chunks {
                        if lines.slice(text, c.start_line, c.end_line).is_some() {
                            docs.push((
                                format!("{}#{}", f.rel_path, c.local_id),
                                chunk_own_text(text, &lines, c),
                            ));
                        }
                    }
                    record.chunks = build_chunk_records(
                        text,
                        chunks,
                        None,
                        now,
                        f.mtime.map(Timestamp::from_system_time),
                    );
                }
            }
        }
        records.push(record);
    }
    Corpus { records, docs }
}

// ---------------------------------------------------------------------------
// Our index, BM25 only (no provider re-ranking).

/// Pure BM25 (same formula and constants as `rank.rs`, and as tantivy),
/// top `k` slots. `lexical` adds the two lexical tweaks `rank.rs` applies
/// before its other signals: drop terms in over a fifth of all chunks when
/// rarer ones exist, and multiply by coverage².
fn ours_bm25(index: &Index, query: &str, k: usize, lexical: bool) -> Vec<u32> {
    let mut terms = distinct_tokens(query);
    terms.truncate(MAX_QUERY_TERMS);
    let n = index.chunk_count().max(1) as f32;
    let avg = index.avg_len();
    let mut acc = vec![0.0f32; index.slot_capacity()];
    let mut hits = vec![0u16; index.slot_capacity()];
    let mut touched: Vec<u32> = Vec::new();
    let mut weighted: Vec<(&String, f32, u32)> = terms
        .iter()
        .filter_map(|t| {
            let df = index.df(t);
            (df > 0).then(|| {
                (
                    t,
                    (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln(),
                    df,
                )
            })
        })
        .collect();
    if lexical && weighted.iter().any(|w| (w.2 as f32) <= n / 5.0) {
        weighted.retain(|w| (w.2 as f32) <= n / 5.0);
    }
    for (t, idf, _) in &weighted {
        for (slot, tf, len) in index.postings(t) {
            let tf = tf as f32;
            let w = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len as f32 / avg));
            let cell = &mut acc[slot as usize];
            if *cell == 0.0 {
                touched.push(slot);
            }
            *cell += w;
            hits[slot as usize] = hits[slot as usize].saturating_add(1);
        }
    }
    if lexical {
        let q = weighted.len().max(1) as f32;
        for &s in &touched {
            let c = f32::from(hits[s as usize]) / q;
            acc[s as usize] *= c * c;
        }
    }
    let best_first =
        |a: &u32, b: &u32| acc[*b as usize].total_cmp(&acc[*a as usize]).then(a.cmp(b));
    if touched.len() > k {
        touched.select_nth_unstable_by(k, best_first);
        touched.truncate(k);
    }
    touched.sort_unstable_by(best_first);
    touched
}

fn ours_ids(index: &Index, slots: &[u32]) -> Vec<String> {
    slots
        .iter()
        .filter_map(|&s| {
            index
                .chunk(s)
                .map(|(rel, c)| format!("{rel}#{}", c.local_id))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Tantivy.

struct Tantivy {
    index: TIndex,
    cgp: Field,
    std: Option<Field>,
}

/// A tantivy index of `docs` in `dir`: field `cgp` with our tokeniser,
/// optionally `std` with tantivy's default tokeniser, both with term
/// frequencies and no positions (our index has none), and the doc number as
/// a fast field. Returns the index and the commit time.
fn build_tantivy(dir: &Path, docs: &[(String, String)], with_std: bool, threads: usize) -> Tantivy {
    let mut sb = Schema::builder();
    let opts = |tokenizer: &str| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqs),
        )
    };
    let cgp = sb.add_text_field("cgp", opts("cgp"));
    let std = with_std.then(|| sb.add_text_field("std", opts("default")));
    let no = sb.add_u64_field("no", FAST);
    let schema = sb.build();
    let index = TIndex::create_in_dir(dir, schema).expect("tantivy index");
    index
        .tokenizers()
        .register("cgp", TextAnalyzer::from(CgpTokenizer::default()));
    let mut writer: IndexWriter<TantivyDocument> = index
        .writer_with_num_threads(threads, 100_000_000 * threads)
        .expect("writer");
    for (i, (_, text)) in docs.iter().enumerate() {
        let mut d = doc!(cgp => text.as_str(), no => i as u64);
        if let Some(f) = std {
            d.add_text(f, text);
        }
        writer.add_document(d).expect("add");
    }
    writer.commit().expect("commit");
    writer.wait_merging_threads().expect("merge");
    Tantivy { index, cgp, std }
}

fn open_tantivy(dir: &Path) -> Tantivy {
    let index = TIndex::open_in_dir(dir).expect("open tantivy");
    index
        .tokenizers()
        .register("cgp", TextAnalyzer::from(CgpTokenizer::default()));
    let schema = index.schema();
    Tantivy {
        cgp: schema.get_field("cgp").expect("cgp field"),
        std: schema.get_field("std").ok(),
        index,
    }
}

fn tantivy_query(t: &Tantivy, field: Field, query: &str) -> BooleanQuery {
    let mut terms: Vec<String> = Vec::new();
    if field == t.cgp {
        terms = distinct_tokens(query);
    } else {
        let mut an = t.index.tokenizer_for_field(field).expect("tokenizer");
        let mut ts = an.token_stream(query);
        while let Some(tok) = ts.next() {
            if !terms.contains(&tok.text) {
                terms.push(tok.text.clone());
            }
        }
    }
    terms.truncate(MAX_QUERY_TERMS);
    let clauses: Vec<(Occur, Box<dyn Query>)> = terms
        .iter()
        .map(|w| {
            let q: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(field, w),
                IndexRecordOption::WithFreqs,
            ));
            (Occur::Should, q)
        })
        .collect();
    BooleanQuery::new(clauses)
}

/// Top `k` doc numbers for `query` on `field`.
fn tantivy_top(
    t: &Tantivy,
    searcher: &tantivy::Searcher,
    field: Field,
    query: &str,
    k: usize,
) -> Vec<u64> {
    let q = tantivy_query(t, field, query);
    let top = searcher
        .search(&q, &TopDocs::with_limit(k).order_by_score())
        .expect("search");
    top.into_iter()
        .filter_map(|(_, addr)| {
            searcher
                .segment_reader(addr.segment_ord)
                .fast_fields()
                .u64("no")
                .ok()?
                .first(addr.doc_id)
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Quality: case generation and grep baseline copied from
// `benches/retrieval_quality.rs` (kept identical so numbers compare).

struct Case {
    kind: &'static str,
    query: String,
    target: String,
}

struct FileChunks {
    rel: String,
    lines: Vec<String>,
    owner: Vec<Option<String>>,
}

fn default_quality_corpus() -> PathBuf {
    let base =
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo/registry/src");
    let mut crates: Vec<PathBuf> = Vec::new();
    for index in std::fs::read_dir(&base).into_iter().flatten().flatten() {
        crates.extend(
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path()),
        );
    }
    crates.sort();
    for preferred in ["regex-automata-", "tokio-1", "clap_builder-"] {
        let found = crates.iter().rev().find(|c| {
            c.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(preferred))
        });
        if let Some(c) = found {
            return c.clone();
        }
    }
    base
}

fn load_lines(root: &Path) -> Vec<FileChunks> {
    let w = walk(root, &WalkOptions::default());
    let mut out = Vec::new();
    for f in w.files {
        let Ok(bytes) = std::fs::read(&f.abs_path) else {
            continue;
        };
        let Ok(text) = content_gate(&bytes) else {
            continue;
        };
        let lang = Language::detect(&f.rel_path);
        let chunks = chunk_file(&f.rel_path, lang, text);
        let li = LineIndex::new(text);
        let n = li.line_count() as usize;
        let mut owner: Vec<Option<(u32, String)>> = vec![None; n];
        for c in &chunks {
            let span = c.end_line - c.start_line;
            for l in c.start_line..=c.end_line {
                let slot = &mut owner[(l - 1) as usize];
                if slot.as_ref().is_none_or(|(s, _)| span < *s) {
                    *slot = Some((span, format!("{}#{}", f.rel_path, c.local_id)));
                }
            }
        }
        out.push(FileChunks {
            rel: f.rel_path.clone(),
            lines: text.lines().map(str::to_owned).collect(),
            owner: owner.into_iter().map(|o| o.map(|x| x.1)).collect(),
        });
    }
    out
}

fn cases(files: &[FileChunks], root: &Path) -> Vec<Case> {
    let mut doc_cases = Vec::new();
    let mut err_cases = Vec::new();
    let mut literal_count: HashMap<String, usize> = HashMap::new();
    let mut literal_owner: HashMap<String, String> = HashMap::new();
    for f in files.iter().filter(|f| f.rel.ends_with(".rs")) {
        let Ok(text) = std::fs::read_to_string(root.join(&f.rel)) else {
            continue;
        };
        for c in chunk_file(&f.rel, Language::Rust, &text) {
            let Some(sym) = &c.symbol else { continue };
            if sym.kind_label != "function" {
                continue;
            }
            let id = format!("{}#{}", f.rel, c.local_id);
            let body: Vec<&str> = f.lines[(c.start_line - 1) as usize..c.end_line as usize]
                .iter()
                .map(String::as_str)
                .collect();
            let doc: Vec<&str> = body
                .iter()
                .map(|l| l.trim_start())
                .take_while(|l| l.starts_with("///") || l.starts_with("#["))
                .filter_map(|l| l.strip_prefix("///"))
                .map(str::trim)
                .take_while(|l| !l.starts_with('#') && !l.starts_with("```"))
                .collect();
            let words: Vec<String> = doc
                .join(" ")
                .split_whitespace()
                .filter(|w| !w.to_lowercase().contains(&sym.name.to_lowercase()))
                .take(25)
                .map(str::to_owned)
                .collect();
            if words.len() >= 6 {
                doc_cases.push(Case {
                    kind: "doc->fn",
                    query: words.join(" "),
                    target: id.clone(),
                });
            }
            for line in &body {
                let is_raise = [
                    "panic!(",
                    "Err(",
                    "expect(",
                    "bail!(",
                    "anyhow!(",
                    "format_err!(",
                    "unreachable!(",
                ]
                .iter()
                .any(|m| line.contains(m));
                if !is_raise {
                    continue;
                }
                if let Some(lit) = line.split('"').nth(1) {
                    let clean: String = lit.chars().filter(|c| *c != '{' && *c != '}').collect();
                    if clean.split_whitespace().count() >= 3 {
                        *literal_count.entry(clean.clone()).or_default() += 1;
                        literal_owner.insert(clean, id.clone());
                    }
                }
            }
        }
    }
    let mut lits: Vec<(String, String)> = literal_owner
        .into_iter()
        .filter(|(l, _)| literal_count.get(l) == Some(&1))
        .collect();
    lits.sort();
    for (lit, id) in lits {
        err_cases.push(Case {
            kind: "error->raiser",
            query: lit,
            target: id,
        });
    }
    let sample = |v: Vec<Case>, n: usize| -> Vec<Case> {
        let step = (v.len() / n).max(1);
        v.into_iter().step_by(step).take(n).collect()
    };
    let mut out = sample(doc_cases, 150);
    out.extend(sample(err_cases, 150));
    out
}

fn grep_rank(files: &[FileChunks], query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect();
    let mut hits: Vec<(usize, usize, usize)> = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        for (li, line) in f.lines.iter().enumerate() {
            let l = line.to_lowercase();
            let n = words.iter().filter(|w| l.contains(w.as_str())).count();
            if n > 0 {
                hits.push((n, fi, li));
            }
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut out: Vec<String> = Vec::new();
    for (_, fi, li) in hits {
        if let Some(Some(id)) = files[fi].owner.get(li) {
            if !out.contains(id) {
                out.push(id.clone());
                if out.len() >= 10 {
                    break;
                }
            }
        }
    }
    out
}

fn score(ranked: &[String], target: &str) -> (f64, f64) {
    match ranked.iter().take(10).position(|r| r == target) {
        Some(i) => (if i < 5 { 1.0 } else { 0.0 }, 1.0 / (i as f64 + 1.0)),
        None => (0.0, 0.0),
    }
}

fn quality() {
    let corpus = std::env::var_os("CGP_QUALITY_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(default_quality_corpus);
    let root = std::fs::canonicalize(&corpus).expect("corpus exists");
    let files = load_lines(&root);
    let cases = cases(&files, &root);
    let corpus_docs = chunk_corpus(&root);
    let ours = Index::from_records(corpus_docs.records.iter().cloned());
    let tdir = tempfile::tempdir().expect("tempdir");
    let t = build_tantivy(tdir.path(), &corpus_docs.docs, true, 1);
    let reader = t.index.reader().expect("reader");
    let searcher = reader.searcher();
    let options = WorkspaceOptions {
        cache: CacheLocation::Disabled,
        ..WorkspaceOptions::default()
    };
    let (provider, _) = WorkspaceProvider::open(&root, options).expect("open corpus");
    println!(
        "corpus: {} ({} files, {} chunks, {} queries)",
        root.display(),
        files.len(),
        corpus_docs.docs.len(),
        cases.len()
    );
    let systems = [
        "provider (full ranking)",
        "ours BM25 + lexical tweaks",
        "ours BM25 only",
        "tantivy BM25, our tokens",
        "tantivy BM25, default tok.",
        "grep",
    ];
    let mut table: HashMap<(&str, &str), (f64, f64, usize)> = HashMap::new();
    let doc_ids = |nos: Vec<u64>| -> Vec<String> {
        nos.into_iter()
            .filter_map(|n| corpus_docs.docs.get(n as usize).map(|d| d.0.clone()))
            .collect()
    };
    let mut agree = (0usize, 0usize);
    for c in &cases {
        let r = provider
            .query(&ContextQuery::new(c.query.clone(), 10, 1_000_000))
            .expect("query");
        let ours_pure = ours_ids(&ours, &ours_bm25(&ours, &c.query, 10, false));
        let tantivy_cgp = doc_ids(tantivy_top(&t, &searcher, t.cgp, &c.query, 10));
        // Like-for-like check: same top-1 from our BM25 and tantivy's.
        agree.1 += 1;
        if ours_pure.first() == tantivy_cgp.first() {
            agree.0 += 1;
        }
        let ranked: [Vec<String>; 6] = [
            r.frames.iter().map(|f| f.id.clone()).collect(),
            ours_ids(&ours, &ours_bm25(&ours, &c.query, 10, true)),
            ours_pure,
            tantivy_cgp,
            doc_ids(tantivy_top(
                &t,
                &searcher,
                t.std.expect("std field"),
                &c.query,
                10,
            )),
            grep_rank(&files, &c.query),
        ];
        for (system, ranked) in systems.iter().zip(ranked) {
            let (r5, rr) = score(&ranked, &c.target);
            for kind in [c.kind, "all"] {
                let e = table.entry((kind, system)).or_insert((0.0, 0.0, 0));
                e.0 += r5;
                e.1 += rr;
                e.2 += 1;
            }
        }
    }
    println!(
        "{:<15} {:<28} {:>5} {:>9} {:>7}",
        "queries", "system", "n", "recall@5", "MRR@10"
    );
    for kind in ["doc->fn", "error->raiser", "all"] {
        for system in systems {
            if let Some((r5, rr, n)) = table.get(&(kind, system)) {
                let n = (*n).max(1) as f64;
                println!(
                    "{kind:<15} {system:<28} {:>5} {:>9.3} {:>7.3}",
                    n as usize,
                    r5 / n,
                    rr / n
                );
            }
        }
    }
    println!(
        "same top-1 from ours-BM25-only and tantivy-BM25-our-tokens: {}/{}",
        agree.0, agree.1
    );
}

// ---------------------------------------------------------------------------
// Performance.

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            total += dir_bytes(&path);
        } else {
            total += e.metadata().map_or(0, |m| m.len());
        }
    }
    total
}

/// Identifiers to query: copied from `benches/index_perf.rs`.
fn sample_queries(root: &Path, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(mut entries) =
            std::fs::read_dir(&dir).map(|e| e.flatten().map(|e| e.path()).collect::<Vec<_>>())
        else {
            continue;
        };
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") && out.len() < n {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                if let Some(name) = text
                    .lines()
                    .filter_map(|l| l.trim_start().strip_prefix("pub fn "))
                    .filter_map(|r| r.split(['(', '<']).next())
                    .find(|n| n.len() > 6)
                {
                    if out.len() % 2 == 0 {
                        out.push(name.to_owned());
                    } else {
                        out.push(name.replace('_', " "));
                    }
                }
            }
        }
    }
    out
}

fn latencies(mut f: impl FnMut(&str), queries: &[String]) -> (f64, f64, f64) {
    // One warm-up pass (page cache, lazy structures), then the measured one.
    for q in queries {
        f(q);
    }
    let mut lat = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        f(q);
        lat.push(t.elapsed());
    }
    lat.sort();
    (
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.95)),
        ms(percentile(&lat, 0.99)),
    )
}

fn perf(args: &[String]) {
    let corpus = args
        .first()
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("CGP_BENCH_CORPUS").map(PathBuf::from))
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo/registry/src")
        });
    let root = std::fs::canonicalize(&corpus).expect("corpus");
    let work = tempfile::tempdir().expect("tempdir");
    let t = Instant::now();
    let c = chunk_corpus(&root);
    let chunk_time = t.elapsed();
    let own_bytes: usize = c.docs.iter().map(|d| d.1.len()).sum();
    println!(
        "corpus {}: {} files, {} chunks, {:.1} MB of chunk own-text; walk+read+chunk+tokenise (shared, 1 thread): {:.1} s",
        root.display(),
        c.records.len(),
        c.docs.len(),
        own_bytes as f64 / 1e6,
        chunk_time.as_secs_f64()
    );

    // Ours: in-memory index from the records (terms already tokenised), then persisted.
    let t = Instant::now();
    let ours = Index::from_records(c.records.iter().cloned());
    let build = t.elapsed();
    let cache_base = work.path().join("cache");
    let store = Store::new(cache_dir_for(&cache_base, &root), &root);
    let t = Instant::now();
    store.write_index(&ours).expect("write");
    let write = t.elapsed();
    // Tokenising is part of the chunk pass for ours; time it alone for a fair build figure.
    let t = Instant::now();
    let mut n_tokens = 0usize;
    for (_, text) in &c.docs {
        tokens(text, |_| n_tokens += 1);
    }
    let tokenise = t.elapsed();
    println!(
        "ours: tokenise {:.2} s ({n_tokens} tokens) + index {:.2} s + encode/sha256/write {:.2} s = {:.2} s; on disk {:.1} MB (all chunk metadata + dictionary + postings)",
        tokenise.as_secs_f64(),
        build.as_secs_f64(),
        write.as_secs_f64(),
        (tokenise + build + write).as_secs_f64(),
        store.size_on_disk() as f64 / 1e6
    );
    let mut tantivy_dirs = Vec::new();
    for threads in [1usize, 2] {
        let tdir = work.path().join(format!("tantivy{threads}"));
        std::fs::create_dir_all(&tdir).expect("mkdir");
        let t = Instant::now();
        let _ = build_tantivy(&tdir, &c.docs, false, threads);
        let tb = t.elapsed();
        println!(
            "tantivy ({threads} indexing thread{}): tokenise+index+commit+merge {:.2} s; on disk {:.1} MB (postings with tf, term dictionary, fieldnorms, doc-number fast field; no stored text)",
            if threads == 1 { "" } else { "s" },
            tb.as_secs_f64(),
            dir_bytes(&tdir) as f64 / 1e6
        );
        tantivy_dirs.push(tdir);
    }

    // Query latency: BM25 top-10, in-process, warm.
    let queries = sample_queries(&root, 300);
    let (p50, p95, p99) = latencies(
        |q| {
            std::hint::black_box(ours_bm25(&ours, q, 10, false));
        },
        &queries,
    );
    println!(
        "ours BM25-only top-10 over {} queries: p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms",
        queries.len()
    );
    let (p50, p95, p99) = latencies(
        |q| {
            std::hint::black_box(ours_bm25(&ours, q, 10, true));
        },
        &queries,
    );
    println!(
        "ours BM25 + lexical tweaks top-10: p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms"
    );
    let tv = open_tantivy(&tantivy_dirs[0]);
    let reader = tv.index.reader().expect("reader");
    let searcher = reader.searcher();
    let (p50, p95, p99) = latencies(
        |q| {
            std::hint::black_box(tantivy_top(&tv, &searcher, tv.cgp, q, 10));
        },
        &queries,
    );
    println!(
        "tantivy BM25 top-10 (our tokens, {} segment(s)): p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms",
        searcher.segment_readers().len()
    );
    // Agreement of the two BM25 top-10s on these queries.
    let mut same1 = 0;
    let mut overlap = 0usize;
    for q in &queries {
        let a = ours_ids(&ours, &ours_bm25(&ours, q, 10, false));
        let b: Vec<String> = tantivy_top(&tv, &searcher, tv.cgp, q, 10)
            .into_iter()
            .filter_map(|n| c.docs.get(n as usize).map(|d| d.0.clone()))
            .collect();
        same1 += usize::from(a.first() == b.first());
        overlap += a.iter().filter(|x| b.contains(x)).count();
    }
    println!(
        "agreement ours-BM25 vs tantivy-BM25: same top-1 {same1}/{}, top-10 overlap {:.1}/10",
        queries.len(),
        overlap as f64 / queries.len().max(1) as f64
    );
    drop(searcher);
    drop(reader);
    drop(tv);
    drop(ours);
    drop(c);

    // Full provider query on the persisted index (loaded, not rebuilt).
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(cache_base.clone()),
        ..WorkspaceOptions::default()
    };
    let (provider, source) = WorkspaceProvider::open(&root, options).expect("open");
    let (p50, p95, p99) = latencies(
        |q| {
            std::hint::black_box(provider.query(&ContextQuery::new(q, 10, 8000)).ok());
        },
        &queries,
    );
    println!(
        "provider full query ({source:?}; BM25 + name + phrase + frames read and hashed from disk): p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms"
    );
    drop(provider);

    // Loads, each in a fresh process so the peak RSS is the load's.
    let exe = std::env::current_exe().expect("exe");
    for _ in 0..3 {
        let _ = std::process::Command::new(&exe)
            .arg("load-ours")
            .arg(&root)
            .arg(&cache_base)
            .arg(&queries[queries.len() / 2])
            .status();
    }
    for _ in 0..3 {
        let _ = std::process::Command::new(&exe)
            .arg("load-tantivy")
            .arg(&tantivy_dirs[0])
            .arg(&queries[queries.len() / 2])
            .status();
    }
    if std::env::var_os("KEEP").is_some() {
        let kept = work.keep();
        println!("kept {}", kept.display());
    }
}

/// Child: load our persisted index through the provider, answer one query.
fn load_ours(args: &[String]) {
    let [root, cache, query, ..] = args else {
        eprintln!("load-ours ROOT CACHE_BASE QUERY");
        return;
    };
    let options = WorkspaceOptions {
        cache: CacheLocation::Base(PathBuf::from(cache)),
        ..WorkspaceOptions::default()
    };
    let t = Instant::now();
    let (p, source) = WorkspaceProvider::open(root, options).expect("open");
    let open = t.elapsed();
    let t = Instant::now();
    let _ = p.query(&ContextQuery::new(query.clone(), 10, 8000));
    let first = t.elapsed();
    println!(
        "load ours ({source:?}): open {:.0} ms + first query {:.1} ms; peak RSS {:.0} MiB",
        ms(open),
        ms(first),
        peak_rss_mib()
    );
}

/// Child: open the tantivy index, answer one query.
fn load_tantivy(args: &[String]) {
    let [dir, query, ..] = args else {
        eprintln!("load-tantivy DIR QUERY");
        return;
    };
    let t = Instant::now();
    let tv = open_tantivy(Path::new(dir));
    let reader = tv.index.reader().expect("reader");
    let searcher = reader.searcher();
    let open = t.elapsed();
    let t = Instant::now();
    let top = tantivy_top(&tv, &searcher, tv.cgp, query, 10);
    let first = t.elapsed();
    println!(
        "load tantivy: open {:.1} ms + first query {:.1} ms ({} hits); peak RSS {:.0} MiB",
        ms(open),
        ms(first),
        top.len(),
        peak_rss_mib()
    );
}

/// This thread's CPU time (ns on CPU, from schedstat): unlike wall time it
/// hardly moves when other processes share the cores.
fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// Child: `Store::load_index` in a loop (min and median of 7, wall and this
/// thread's CPU), then one BM25 query. (Since format 5 the index is read in
/// place: there is no warm-up left to time.)
fn load_store(args: &[String]) {
    let [root, cache, ..] = args else {
        eprintln!("load-store ROOT CACHE_BASE");
        return;
    };
    let root = std::fs::canonicalize(root).expect("root");
    let store = Store::new(cache_dir_for(Path::new(cache), &root), &root);
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let (t, c) = (Instant::now(), thread_cpu());
        let (index, _) = store.load_index().expect("load").expect("an index");
        wall.push(t.elapsed());
        cpu.push(thread_cpu() - c);
        std::hint::black_box(ours_bm25(&index, "parse config", 10, false));
        drop(index);
    }
    for v in [&mut wall, &mut cpu] {
        v.sort();
    }
    println!(
        "Store::load_index x7: wall min {:.0} ms, median {:.0} ms; CPU min {:.0} ms, median {:.0} ms; peak RSS {:.0} MiB",
        ms(wall[0]),
        ms(wall[3]),
        ms(cpu[0]),
        ms(cpu[3]),
        peak_rss_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("load-store") => load_store(&args[1..]),
        Some("quality") => quality(),
        Some("perf") => perf(&args[1..]),
        Some("load-ours") => load_ours(&args[1..]),
        Some("load-tantivy") => load_tantivy(&args[1..]),
        _ => eprintln!("usage: tantivy-compare quality | perf [CORPUS]"),
    }
}
