//! [`DocsProvider`]: the [`Provider`] implementation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use contextgraph_provider_sdk::{
    check_embedding, pack, sha256_digest, verdict, verify_each, FrameBuilder, Provider,
    ProviderError, Served,
};
use contextgraph_types::{
    token_cost_of_len, Capabilities, ContentFidelity, ContextFrame, ContextQuery,
    ContextQueryResult, DataFlow, EgressScope, FrameKind, Provenance, ProviderInfo,
    QueryCapability, Timestamp, Verdict, VerifyRequest, VerifyResponse,
};

use crate::config::DocsConfig;
use crate::error::DocsError;
use crate::ids::parse_frame_id;
use crate::index::{read_document, sections_of, Index, IndexedFile, IndexedSection, LoadError};
use crate::score::{bm25, normalise, query_terms, SectionTerms};
use crate::walk::{served_path, ScanReport};

/// The provider name, which hosts also use as its provider id.
pub const PROVIDER_NAME: &str = "contextgraph-provider-docs";

/// How the provenance says the content was obtained.
const PROVENANCE_METHOD: &str = "markdown-section";

/// At most this many ranked candidates become frames offered to packing; the
/// rest are counted as dropped. Keeps the work of one query bounded however
/// many sections match.
const MAX_CANDIDATES: usize = 256;

/// Candidates offered to packing per frame the query may carry. Packing
/// takes at most `max_frames` of them, skipping only ones too large for the
/// budget left, so a few times that many leave it room to skip without
/// copying hundreds of sections that cannot be sent.
const CANDIDATES_PER_FRAME: usize = 8;

/// An anchored section (its file, or a file it documents, is one of the
/// query's anchors) gains this multiple of the best text score: one that also
/// matches the text outranks every unanchored section, and one that does not
/// still ranks level with the best unanchored match.
const ANCHOR_BONUS: f64 = 1.0;

/// Serves the Markdown and plain-text documents of a folder as `doc` frames,
/// one per heading section.
///
/// Every frame's content is the section's exact bytes; its file provenance
/// addresses exactly those lines with their SHA-256 (F5), which is also its
/// `content_digest` (D1); `token_cost` is computed from the content (B3);
/// `recorded_at` is the file's mtime (F4). `verify` re-reads the file to
/// answer (V1–V4).
#[derive(Debug)]
pub struct DocsProvider {
    root: PathBuf,
    config: DocsConfig,
    index: Mutex<Index>,
}

impl DocsProvider {
    /// Index `config.root` (bounded by the configuration) and return a
    /// provider ready to serve it.
    pub fn open(config: DocsConfig) -> Result<Self, DocsError> {
        let root = std::fs::canonicalize(&config.root).map_err(|source| DocsError::OpenRoot {
            path: config.root.clone(),
            source,
        })?;
        if !root.is_dir() {
            return Err(DocsError::NotADirectory { path: config.root });
        }
        let provider = DocsProvider {
            root,
            config,
            index: Mutex::new(Index::default()),
        };
        provider.refresh();
        Ok(provider)
    }

    /// The served folder, canonicalised.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the last scan of the folder saw.
    pub fn scan_report(&self) -> ScanReport {
        self.lock().report().clone()
    }

    fn lock(&self) -> MutexGuard<'_, Index> {
        // A panic while holding the lock cannot leave the index half-updated
        // (refresh replaces it whole), so a poisoned lock is still usable.
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn refresh(&self) -> Vec<Arc<IndexedFile>> {
        self.lock().refresh(&self.root, &self.config)
    }

    fn frame(file: &IndexedFile, s: &IndexedSection, score: f32) -> ContextFrame {
        let range = s.section.line_range().to_string();
        let label = if s.section.level == 0 {
            format!("{} {range}", file.rel)
        } else {
            format!("{} § {} ({range})", file.rel, s.section.title)
        };
        // The section's bytes are exactly lines start..=end of the file
        // (sections tile the text by line), so the provenance digest is the
        // digest computed over them at indexing — the same bytes the content
        // carries, whose digest the builder computes again for D1.
        let provenance = Provenance {
            kind: Provenance::FILE.to_owned(),
            uri: Some(file.uri.clone()),
            range: Some(range),
            digest: Some(s.digest.clone()),
            method: Some(PROVENANCE_METHOD.to_owned()),
            by: Some(PROVIDER_NAME.to_owned()),
        };
        let mut builder = FrameBuilder::new(
            s.id.clone(),
            FrameKind::Doc,
            s.section.title.clone(),
            s.section.text(&file.text),
        )
        .uri(file.uri.clone())
        .score(score)
        .citation_label(label)
        .content_fidelity(ContentFidelity::Exact)
        .provenance(provenance)
        .relations(s.relations.iter().cloned());
        if let Some(at) = file.recorded_at {
            builder = builder.recorded_at(at);
        }
        builder.build()
    }

    /// The verdict for one identity, by frame id and digest, re-reading the
    /// file through `cache` (one read per file per request). The identity's
    /// `provider_id` is the host's label for this provider, so it plays no
    /// part (see `contextgraph_provider_sdk::verify`).
    fn verdict(
        &self,
        frame_id: &str,
        presented: Option<&str>,
        cache: &mut HashMap<String, OnDisk>,
    ) -> Verdict {
        let Some((rel, slug)) = parse_frame_id(frame_id) else {
            return Verdict::Gone;
        };
        let sections = cache
            .entry(rel.clone())
            .or_insert_with(|| self.current_sections(&rel));
        let served = match sections {
            OnDisk::Unknown => Served::Unknown,
            OnDisk::NotServed => Served::Gone,
            OnDisk::Sections(sections) => match sections.iter().find(|(s, _)| s == slug) {
                Some((_, digest)) => Served::Now(digest),
                None => Served::Gone,
            },
        };
        verdict(presented, served)
    }

    /// The sections of `rel` as it is on disk now.
    fn current_sections(&self, rel: &str) -> OnDisk {
        let path = match served_path(&self.root, rel, &self.config) {
            Ok(Some(path)) => path,
            Ok(None) => return OnDisk::NotServed,
            Err(_) => return OnDisk::Unknown,
        };
        let text = match read_document(&path, &self.config) {
            Ok((text, _)) => text,
            Err(LoadError::NotServed) => return OnDisk::NotServed,
            Err(LoadError::Io) => return OnDisk::Unknown,
        };
        OnDisk::Sections(
            sections_of(rel, &text)
                .into_iter()
                .map(|s| {
                    let digest = sha256_digest(s.text(&text).as_bytes());
                    (s.slug, digest)
                })
                .collect(),
        )
    }
}

/// A document as `verify` finds it on disk.
enum OnDisk {
    /// `(slug, digest)` of each section now.
    Sections(Vec<(String, String)>),
    /// Gone, or no longer a served document: its frames are `gone`.
    NotServed,
    /// The file system would not say (e.g. permission denied): `unknown`.
    Unknown,
}

/// Whether `file` (or a file one of its sections documents) is a query anchor.
fn anchored(file: &IndexedFile, section: &IndexedSection, anchors: &[String]) -> bool {
    anchors.iter().any(|a| {
        *a == file.uri || *a == file.rel || section.relations.iter().any(|r| r.target_uri == *a)
    })
}

impl Provider for DocsProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            name: PROVIDER_NAME.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
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
                kinds: vec![FrameKind::Doc],
            },
            correlation: true,
            verify: true,
            ..Capabilities::default()
        }
    }

    fn query(&self, query: &ContextQuery) -> Result<ContextQueryResult, ProviderError> {
        // Bounded work per request, also in-process (`contextgraph_types::limits`).
        if let Err(limit) = contextgraph_types::limits::check_query(query) {
            return Err(ProviderError::bad_request(format!(
                "{PROVIDER_NAME}: query over a limit: {limit}"
            )));
        }
        if let Some(v) = query.validate().into_iter().next() {
            return Err(ProviderError::bad_request(format!(
                "{PROVIDER_NAME}: {} at {}: {}; fix the query and send it again",
                v.anchor, v.path, v.message
            )));
        }
        check_embedding(query, None)?;
        // Q1: a query that does not want docs gets none, without touching the disk.
        if !query.accepts_kind(&FrameKind::Doc) {
            return Ok(ContextQueryResult::default());
        }
        let as_of = query
            .as_of
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok());
        let files = self.refresh();
        // `as_of`: a file modified after the pinned instant is not offered;
        // this provider keeps no history, so it has nothing older to offer instead.
        let eligible: Vec<(&IndexedFile, &IndexedSection)> = files
            .iter()
            .filter(|f| match (as_of, f.recorded_at) {
                (Some(pin), Some(at)) => at <= pin,
                _ => true,
            })
            .flat_map(|f| f.sections.iter().map(move |s| (&**f, s)))
            .collect();
        let terms = query_terms(query.match_text());
        let stats: Vec<&SectionTerms> = eligible.iter().map(|(_, s)| &s.terms).collect();
        let mut raw = bm25(&terms, &stats);
        if !query.anchors.is_empty() {
            let best = raw.iter().copied().fold(0.0, f64::max);
            let bonus = ANCHOR_BONUS * if best > 0.0 { best } else { 1.0 };
            for (score, (f, s)) in raw.iter_mut().zip(&eligible) {
                if anchored(f, s, &query.anchors) {
                    *score += bonus;
                }
            }
        }
        let scores = normalise(&raw);
        let mut ranked: Vec<(f32, &IndexedFile, &IndexedSection)> = scores
            .into_iter()
            .zip(eligible)
            .filter(|(score, _)| *score > 0.0)
            .map(|(score, (f, s))| (score, f, s))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.2.id.cmp(&b.2.id)));
        // Sections that can never fit the budget are left out before any
        // content is copied; they still count as dropped.
        let fits_alone =
            |s: &IndexedSection| token_cost_of_len(s.section.bytes.len()) <= query.max_tokens;
        let limit = usize::try_from(query.max_frames)
            .unwrap_or(usize::MAX)
            .saturating_mul(CANDIDATES_PER_FRAME)
            .min(MAX_CANDIDATES);
        let mut dropped = 0u32;
        let mut candidates = Vec::new();
        for (score, f, s) in ranked {
            if candidates.len() < limit && fits_alone(s) {
                candidates.push(Self::frame(f, s, score));
            } else {
                dropped = dropped.saturating_add(1);
            }
        }
        let mut result = pack(candidates, query);
        if dropped > 0 {
            result.truncated = true;
            result.dropped_estimate =
                Some(result.dropped_estimate.unwrap_or(0).saturating_add(dropped));
        }
        Ok(result)
    }

    fn verify(&self, request: &VerifyRequest) -> VerifyResponse {
        let mut cache = HashMap::new();
        verify_each(
            request,
            self.config.max_verify_identities,
            |frame_id, presented| self.verdict(frame_id, presented, &mut cache),
        )
    }
}
