//! The in-memory index: every served document, split into sections, with the
//! digests, costs and term statistics a query needs.
//!
//! Built at start-up and refreshed on each query by a walk that compares
//! each file's length and mtime with what was indexed: unchanged files are
//! reused as they are, changed ones are re-read, vanished ones dropped. Files
//! that failed to load are remembered by stamp too, so a non-UTF-8 file is
//! not re-read on every query. The walk itself is bounded by the
//! configuration (files, bytes, depth).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use contextgraph_provider_sdk::{path_to_file_uri, sha256_digest};
use contextgraph_types::{Relation, Timestamp};

use crate::config::DocsConfig;
use crate::ids::frame_id;
use crate::relations::documented_files;
use crate::score::SectionTerms;
use crate::sections::{split_sections, Section, Syntax};
use crate::walk::{walk, FileStamp, ScanReport};

/// One indexed document.
#[derive(Debug)]
pub(crate) struct IndexedFile {
    /// `/`-separated path relative to the root.
    pub rel: String,
    /// `file://` URI of the file.
    pub uri: String,
    pub stamp: FileStamp,
    /// The file's mtime (F4 on the wire).
    pub recorded_at: Option<Timestamp>,
    /// The whole text; sections are slices of it.
    pub text: String,
    pub sections: Vec<IndexedSection>,
}

/// One indexed section.
#[derive(Debug)]
pub(crate) struct IndexedSection {
    pub section: Section,
    /// The frame id, `<path>#<slug>`.
    pub id: String,
    /// SHA-256 of the section's exact bytes: both the content digest (D1)
    /// and the provenance digest (F5), since content is exactly those bytes.
    pub digest: String,
    pub terms: SectionTerms,
    pub relations: Vec<Relation>,
}

/// Why a document could not be loaded.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// Gone, or no longer a served document (too large, not UTF-8).
    NotServed,
    /// The file system would not say (e.g. permission denied).
    Io,
}

/// Read a document, bounded by the size cap, with the stamp of the bytes
/// actually read: the stamp is taken from the open handle before and after
/// reading, and a file that changed underneath is read again (once).
pub(crate) fn read_document(
    path: &Path,
    config: &DocsConfig,
) -> Result<(String, FileStamp), LoadError> {
    let not_found = |e: io::Error| {
        if e.kind() == io::ErrorKind::NotFound {
            LoadError::NotServed
        } else {
            LoadError::Io
        }
    };
    let mut last = None;
    for _attempt in 0..2 {
        let file = File::open(path).map_err(not_found)?;
        let before = FileStamp::of(&file.metadata().map_err(|_| LoadError::Io)?);
        if before.len > config.max_file_bytes {
            return Err(LoadError::NotServed);
        }
        let mut bytes = Vec::with_capacity(usize::try_from(before.len).unwrap_or(0));
        let mut reader = file.take(config.max_file_bytes.saturating_add(1));
        reader.read_to_end(&mut bytes).map_err(|_| LoadError::Io)?;
        if bytes.len() as u64 > config.max_file_bytes {
            return Err(LoadError::NotServed);
        }
        let after = FileStamp::of(&reader.into_inner().metadata().map_err(|_| LoadError::Io)?);
        let text = String::from_utf8(bytes).map_err(|_| LoadError::NotServed)?;
        // What a file holds decides too: a private key under `notes.md` is
        // never served (N7, `contextgraph_types::secrets`).
        if contextgraph_types::secrets::secret_in_content(&text).is_some()
            || contextgraph_types::secrets::is_cgp_state("", &text)
        {
            return Err(LoadError::NotServed);
        }
        if before == after && after.len == text.len() as u64 {
            return Ok((text, after));
        }
        last = Some((text, after));
    }
    last.ok_or(LoadError::NotServed)
}

/// The file name ending `rel`.
pub(crate) fn file_name(rel: &str) -> &str {
    rel.rsplit_once('/').map_or(rel, |(_, name)| name)
}

/// Split a document's text into sections under the syntax its name calls for.
pub(crate) fn sections_of(rel: &str, text: &str) -> Vec<Section> {
    let name = file_name(rel);
    split_sections(text, name, Syntax::for_file_name(name))
}

fn index_file(
    root: &Path,
    rel: &str,
    abs: &Path,
    config: &DocsConfig,
) -> Result<IndexedFile, LoadError> {
    let (text, stamp) = read_document(abs, config)?;
    // Only a path that is not Unicode on a non-Unix platform has no URI.
    let uri = path_to_file_uri(abs).map_err(|_| LoadError::NotServed)?;
    let sections = sections_of(rel, &text)
        .into_iter()
        .map(|section| {
            let body = section.text(&text);
            IndexedSection {
                id: frame_id(rel, &section.slug),
                digest: sha256_digest(body.as_bytes()),
                terms: SectionTerms::new(&section.title, body),
                relations: documented_files(body, rel, root),
                section,
            }
        })
        .collect();
    Ok(IndexedFile {
        rel: rel.to_owned(),
        uri,
        recorded_at: stamp.modified.map(Timestamp::from_system_time),
        stamp,
        text,
        sections,
    })
}

/// The index proper.
#[derive(Debug, Default)]
pub(crate) struct Index {
    files: BTreeMap<String, Arc<IndexedFile>>,
    /// Files that failed to load, by the stamp they had then.
    failed: BTreeMap<String, FileStamp>,
    report: ScanReport,
}

impl Index {
    /// Bring the index in line with the folder and return the documents now served.
    pub(crate) fn refresh(&mut self, root: &Path, config: &DocsConfig) -> Vec<Arc<IndexedFile>> {
        let mut report = ScanReport::default();
        let found = walk(root, config, &mut report);
        let mut files = BTreeMap::new();
        let mut failed = BTreeMap::new();
        let mut total: u64 = 0;
        for f in found {
            if total.saturating_add(f.stamp.len) > config.max_total_bytes {
                report.hit_limit = true;
                break;
            }
            let reused = self
                .files
                .get(&f.rel)
                .filter(|old| old.stamp == f.stamp)
                .cloned();
            let indexed = match reused {
                Some(old) => old,
                None if self.failed.get(&f.rel) == Some(&f.stamp) => {
                    report.skipped_unreadable += 1;
                    failed.insert(f.rel, f.stamp);
                    continue;
                }
                None => match index_file(root, &f.rel, &f.abs, config) {
                    Ok(file) => Arc::new(file),
                    Err(_) => {
                        report.skipped_unreadable += 1;
                        failed.insert(f.rel, f.stamp);
                        continue;
                    }
                },
            };
            total = total.saturating_add(indexed.text.len() as u64);
            report.files += 1;
            report.sections += indexed.sections.len();
            files.insert(f.rel, indexed);
        }
        self.files = files;
        self.failed = failed;
        self.report = report;
        self.files.values().cloned().collect()
    }

    /// What the last refresh saw.
    pub(crate) fn report(&self) -> &ScanReport {
        &self.report
    }
}
