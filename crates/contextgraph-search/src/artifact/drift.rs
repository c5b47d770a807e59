//! What of a checkout differs from the index served ([`Workspace::drift`]).
//!
//! A read-only replica never re-indexes, so a file edited, removed or
//! added after its artifact was built is answered from the artifact (an
//! edited file's chunks are not served at all: each frame is checked
//! against the file's bytes). The drift check says which files those are,
//! so the replica can report them (at start, in its health answer) and an
//! operator can ship a new artifact. Stamps from the build machine (mtimes,
//! inodes) mean nothing on a fresh clone, so a file is compared by size and
//! then by the SHA-256 of its bytes, which the index records per file.

use std::collections::HashSet;
use std::io::Read as _;

use crate::index::sha256;
use crate::workspace::Workspace;

/// Files of the checkout that differ from the index, each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drift {
    /// Indexed files whose bytes are not the indexed ones.
    pub changed: Vec<String>,
    /// Indexed files that are gone.
    pub missing: Vec<String>,
    /// Files the walk admits that the index does not know.
    pub added: Vec<String>,
}

impl Drift {
    /// How many files differ in all.
    pub fn len(&self) -> usize {
        self.changed.len() + self.missing.len() + self.added.len()
    }

    /// Whether the checkout holds exactly the indexed files.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A line for people: the counts and the first few paths.
    pub fn summary(&self, shown: usize) -> String {
        let mut first: Vec<&str> = self
            .changed
            .iter()
            .chain(&self.missing)
            .chain(&self.added)
            .map(String::as_str)
            .take(shown)
            .collect();
        if self.len() > shown {
            first.push("…");
        }
        format!(
            "{} changed, {} missing, {} added: {}",
            self.changed.len(),
            self.missing.len(),
            self.added.len(),
            first.join(", ")
        )
    }
}

impl Workspace {
    /// Compare the checkout with the index (see the module docs). Reads
    /// every indexed file whose size matches; writes nothing.
    pub fn drift(&self) -> Drift {
        let root = self.root().to_path_buf();
        let heads: Vec<(String, u64, [u8; 32])> = self
            .read_index()
            .heads()
            .map(|h| (h.rel_path.clone(), h.size, h.content_hash))
            .collect();
        let mut drift = Drift::default();
        for (rel, size, digest) in &heads {
            let path = root.join(rel);
            let meta = match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => m,
                _ => {
                    drift.missing.push(rel.clone());
                    continue;
                }
            };
            if meta.len() != *size || !same_bytes(&path, *size, digest) {
                drift.changed.push(rel.clone());
            }
        }
        let known: HashSet<&str> = heads.iter().map(|(r, _, _)| r.as_str()).collect();
        let walk = crate::walk::walk(&root, &self.options().walk);
        drift.added = walk
            .files
            .into_iter()
            .map(|f| f.rel_path)
            .filter(|r| !known.contains(r.as_str()))
            .collect();
        drift.changed.sort();
        drift.missing.sort();
        drift.added.sort();
        drift
    }
}

/// Whether the file at `path` holds `size` bytes hashing to `digest`
/// (read up to one byte past `size`, so a file growing under us is seen
/// as changed rather than read without end).
fn same_bytes(path: &std::path::Path, size: u64, digest: &[u8; 32]) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut bytes = Vec::new();
    if file.take(size + 1).read_to_end(&mut bytes).is_err() {
        return false;
    }
    bytes.len() as u64 == size && sha256(&bytes) == *digest
}
