//! Which files provably still hold the bytes the index was built from,
//! judged by their metadata alone: what lets `verify` answer from the
//! index's stored chunk digests instead of reading and re-chunking a file.
//!
//! The proof is the freshness check's own ([`crate::tree`]): a file whose
//! stamp (type, size, modification and change times, inode) was *settled*
//! when a refresh read it — older than that refresh by more than the racy
//! window — and is the same now, was not written since: any write moves
//! the change time (an edit that restores size and modification time
//! included), a replacement by rename changes the inode. A file the index
//! took over without reading it under the stamp the tree holds (a full walk
//! with no earlier tree to compare against trusts size and modification
//! time only) is not proven until a refresh has hashed it again; an
//! unsettled stamp is not proven either. Unproven files are read, and
//! answered from the index when their bytes hash to the indexed content
//! ([`Workspace::if_indexed_bytes`]).
//!
//! [`Proven`] is kept beside the index and updated at the end of every
//! refresh, after the index changes are applied: between the two a file's
//! entry names its previous stamp, which no longer matches the file, so the
//! worst case is a read that was not needed, never a stale answer.

use std::fs::Metadata;

use foldhash::{HashMap, HashMapExt};

use crate::index::{FileRecord, Index};
use crate::tree::{Stamp, Tree};
use crate::workspace::Workspace;

/// The settled stamps under which the index's copy of each admitted file
/// was read (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Proven {
    stamps: HashMap<String, Stamp>,
}

impl Proven {
    /// The stamp proving `rel`'s indexed bytes, if the tree and the index
    /// agree that the file was read under a settled stamp.
    fn proof(tree: &Tree, index: &Index, rel: &str) -> Option<Stamp> {
        let known = tree.files.get(rel)?;
        // The head only: the chunks are not needed here, and decoding
        // every file's (a rebuild asks for all) would undo the lazy load.
        let indexed = index.file_head(rel)?;
        let admitted = known.skipped.is_none() && indexed.skipped.is_none();
        // The index's own record of the read must agree with the stamp.
        let stamp = known.stamp?;
        let same_read =
            indexed.size == stamp.size() && indexed.mtime_ns == Some(i128::from(stamp.mtime_ns()));
        (known.settled && admitted && same_read).then_some(stamp)
    }

    /// Rebuild from the whole tree (after a full walk).
    pub(crate) fn rebuild(&mut self, tree: Option<&Tree>, index: &Index) {
        self.stamps.clear();
        let Some(tree) = tree else {
            return; // no tree: nothing is proven, every verify reads
        };
        self.stamps = HashMap::with_capacity(tree.files.len());
        for rel in tree.files.keys() {
            if let Some(stamp) = Proven::proof(tree, index, rel) {
                self.stamps.insert(rel.clone(), stamp);
            }
        }
    }

    /// Update the entries of `paths` only (after a quick check: no other
    /// file's stamp or index record changed).
    pub(crate) fn update<'p>(
        &mut self,
        tree: Option<&Tree>,
        index: &Index,
        paths: impl IntoIterator<Item = &'p str>,
    ) {
        for rel in paths {
            match tree.and_then(|t| Proven::proof(t, index, rel)) {
                Some(stamp) => {
                    self.stamps.insert(rel.to_owned(), stamp);
                }
                None => {
                    self.stamps.remove(rel);
                }
            }
        }
    }
}

impl Workspace {
    /// Answer `read` from the index's record of `rel_path` when the file,
    /// whose metadata (`symlink_metadata`, taken by the caller) is `meta`,
    /// provably holds the bytes that record was built from (see the module
    /// docs); `None` when that cannot be proven, and the caller must read
    /// the file. For `verify`: a held frame's digest compared with the
    /// stored chunk digest without reading or re-chunking the file.
    pub fn if_unchanged_since_indexed<R>(
        &self,
        rel_path: &str,
        meta: &Metadata,
        read: impl FnOnce(&FileRecord) -> R,
    ) -> Option<R> {
        let now = Stamp::of(meta);
        // The index first, then the proofs: a refresh updates the proofs
        // only after applying the index, and cannot apply while this read
        // guard is held, so a proof seen here names bytes this index holds
        // (or older bytes, whose stamp no longer matches).
        let index = self.read_index();
        let proven = self.shared.proven.read().unwrap_or_else(|p| p.into_inner());
        if proven.stamps.get(rel_path) != Some(&now) {
            return None;
        }
        index.file(rel_path).map(read)
    }

    /// Answer `read` from the index's record of `rel_path` when `bytes`,
    /// read from the file now, are exactly the bytes that record was built
    /// from (same content hash): for a file whose stamp proves nothing (a
    /// recent write, an index kept without its tree) but whose content the
    /// index already holds, a hash instead of a re-chunk. `None` when the
    /// index holds other bytes, or none: the caller chunks them itself.
    pub fn if_indexed_bytes<R>(
        &self,
        rel_path: &str,
        bytes: &[u8],
        read: impl FnOnce(&FileRecord) -> R,
    ) -> Option<R> {
        let hash = crate::index::sha256(bytes);
        let index = self.read_index();
        index
            .file(rel_path)
            .filter(|r| r.skipped.is_none() && r.content_hash == hash)
            .map(read)
    }
}
