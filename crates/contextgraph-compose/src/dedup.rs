//! Dedup you can trust (D2): frames are grouped by what the composer can
//! check itself, never by what a provider declares about identity.
//!
//! Two candidates are the same evidence when their content is byte-identical
//! (SHA-256 recomputed here, so declaring another frame's `content_digest`
//! achieves nothing) or when their `file` provenance names the same or an
//! overlapping region of the same URI (no range = the whole resource). Being
//! the same is transitive, so groups are the connected components of those
//! two relations: a partition of the *set* of candidates, whatever order they
//! arrived in. Each group is represented by the member with the most
//! content (so a collapsed region keeps the widest text), ties going to the
//! canonically first FrameId; the others are reported as its duplicates and
//! their provenance is merged into its citation.

use contextgraph_types::{ContextFrame, LineRange};
use std::borrow::Cow;
use std::collections::hash_map::{Entry, RandomState};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::ops::Range;

use crate::hash::ContentSha256;
use crate::keys::{Keyed, KeyedMap, Keyer};

/// A frame that survived the per-frame checks, with everything recomputed
/// and everything later passes need taken from the frame in one visit.
pub(crate) struct Candidate<'a> {
    /// Index of its audit entry (which holds its FrameId as served).
    pub entry: usize,
    /// Unescaped length of its identity, label excepted (provider id, frame
    /// id, kind, title): with the label's and the body's, a bound on the
    /// text it can put in the prompt (the boundary token's length).
    pub attributes_len: usize,
    /// Its provider's id (host-assigned: the first part of its FrameId).
    pub provider_id: &'a str,
    /// Index of its provider in provider-id order.
    pub provider: usize,
    /// The frame as received.
    pub frame: &'a ContextFrame,
    /// The content that would be rendered (inline or rehydrated).
    pub body: Cow<'a, str>,
    /// SHA-256 of `body`, recomputed here.
    pub sha: ContentSha256,
    /// The declared `content_digest`, parsed once while the frame is in
    /// cache (D1 is then checked by comparing 32 bytes).
    pub declared: Declared,
    /// B3 cost of `body`.
    pub cost: u32,
    /// Score clamped to [0, 1], NaN as 0.
    pub score: f32,
    /// The label it asks for (see [`crate::labels::raw_label`]), hashed.
    pub label: Keyed<'a>,
}

/// A frame's declared `content_digest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    /// None declared.
    Absent,
    /// `sha256:` + 64 lowercase hex, as bytes.
    Digest(ContentSha256),
    /// Anything else: it cannot be the digest of any content (D1).
    Malformed,
}

impl Declared {
    pub fn parse(declared: Option<&str>) -> Self {
        match declared {
            None => Declared::Absent,
            Some(text) => ContentSha256::parse(text).map_or(Declared::Malformed, Declared::Digest),
        }
    }

    /// Whether content hashing to `actual` contradicts this declaration (D1).
    pub fn contradicts(&self, actual: &ContentSha256) -> bool {
        match self {
            Declared::Absent => false,
            Declared::Digest(d) => d != actual,
            Declared::Malformed => true,
        }
    }
}

/// One `file` provenance region of a candidate: the URI (hashed), the
/// lines (`1..=u32::MAX` for the whole resource) and the candidate's index.
pub(crate) struct Region<'a> {
    pub uri: Keyed<'a>,
    pub start: u32,
    pub end: u32,
    pub candidate: usize,
}

/// The regions of `frame`'s `file` provenance, for candidate `index`. A
/// malformed range (an F5 violation) names no region that can be compared.
pub(crate) fn regions_of<'a>(
    frame: &'a ContextFrame,
    index: usize,
    keyer: &Keyer,
    out: &mut Vec<Region<'a>>,
) {
    for p in frame.file_provenance() {
        let Some(uri) = p
            .uri
            .as_deref()
            .filter(|u| u.chars().any(|c| !c.is_whitespace()))
        else {
            continue;
        };
        let (start, end) = match p.range.as_deref() {
            None => (1, u32::MAX),
            Some(text) => match LineRange::parse(text) {
                Some(r) => (r.start, r.end),
                None => continue,
            },
        };
        out.push(Region {
            uri: keyer.key(uri),
            start,
            end,
            candidate: index,
        });
    }
}

/// Groups of candidates that are the same evidence.
pub(crate) struct Groups {
    /// Candidate indices, group after group, each group in index order.
    pub members: Vec<usize>,
    /// Per group: its range in `members` and its representative.
    pub groups: Vec<(Range<usize>, usize)>,
}

/// Group `candidates`, which must be sorted canonically (by FrameId) with
/// unique FrameIds. Groups come out sorted by their representative's index,
/// i.e. in canonical order of the frames that will be rendered.
pub(crate) fn group(candidates: &[Candidate<'_>], regions: &[Region<'_>]) -> Groups {
    let n = candidates.len();
    let mut sets = UnionFind::new(n);
    let mut by_content: HashMap<ContentSha256, usize, DigestKeyed> =
        HashMap::with_capacity_and_hasher(n, DigestKeyed::new());
    for (i, c) in candidates.iter().enumerate() {
        match by_content.entry(c.sha) {
            Entry::Occupied(first) => sets.union(*first.get(), i),
            Entry::Vacant(slot) => {
                slot.insert(i);
            }
        }
    }
    union_overlapping_regions(regions, &mut sets);

    let roots: Vec<usize> = (0..n).map(|i| sets.find(i)).collect();
    // Members in (root, index) order by counting, O(n): roots are indices.
    let mut start_of = vec![0usize; n + 1];
    for &r in &roots {
        start_of[r + 1] += 1;
    }
    for r in 0..n {
        start_of[r + 1] += start_of[r];
    }
    let mut members = vec![0usize; n];
    for (i, &r) in roots.iter().enumerate() {
        members[start_of[r]] = i;
        start_of[r] += 1;
    }
    let mut groups = Vec::new();
    let mut start = 0;
    while start < n {
        let root = roots[members[start]];
        let mut end = start + 1;
        while end < n && roots[members[end]] == root {
            end += 1;
        }
        let rep = members[start..end]
            .iter()
            .copied()
            // Most content wins; on a tie the earlier (canonical) index.
            .max_by(|&a, &b| {
                candidates[a]
                    .body
                    .len()
                    .cmp(&candidates[b].body.len())
                    .then(b.cmp(&a))
            })
            .unwrap_or(members[start]);
        groups.push((start..end, rep));
        start = end;
    }
    groups.sort_unstable_by_key(|g| g.1);
    Groups { members, groups }
}

/// Union candidates whose `file` provenance regions overlap on the same URI:
/// number the URIs, sort the regions by (uri, start) and sweep, O(r log r).
fn union_overlapping_regions(regions: &[Region<'_>], sets: &mut UnionFind) {
    // Numbering compares each URI with the first one equal to it, both
    // scattered on the heap: read them all first, in a loop whose loads are
    // independent, so that their misses overlap instead of queueing.
    let touched = regions.iter().fold(0u8, |acc, r| {
        acc.wrapping_add(r.uri.text.as_bytes().first().copied().unwrap_or(0))
    });
    std::hint::black_box(touched);
    let mut uris: KeyedMap<'_, u32> = KeyedMap::default();
    uris.reserve(regions.len());
    // (uri number << 32 | start, end, candidate): one integer to compare.
    // Regions with the same uri and start may come in any order: the sweep
    // unions them all with the same anchor and reaches the largest end.
    let mut sorted: Vec<(u64, u32, usize)> = regions
        .iter()
        .map(|r| {
            let next = u32::try_from(uris.len()).unwrap_or(u32::MAX);
            let uri = *uris.entry(r.uri).or_insert(next);
            (
                u64::from(uri) << 32 | u64::from(r.start),
                r.end,
                r.candidate,
            )
        })
        .collect();
    drop(uris);
    sorted.sort_unstable_by_key(|r| r.0);
    let mut k = 0;
    while k < sorted.len() {
        let (key, mut reach, anchor) = sorted[k];
        let uri = key >> 32;
        k += 1;
        while k < sorted.len() && sorted[k].0 >> 32 == uri && (sorted[k].0 as u32) <= reach {
            sets.union(anchor, sorted[k].2);
            reach = reach.max(sorted[k].1);
            k += 1;
        }
    }
}

/// Hashes a SHA-256 key by a keyed mix of its first 8 bytes: the key is
/// already uniformly distributed, and the per-process random key keeps a
/// provider that grinds contents from aiming at one bucket. Iteration order
/// is never used, so the output does not depend on the key.
#[derive(Clone)]
struct DigestKeyed {
    key: u64,
}

impl DigestKeyed {
    fn new() -> Self {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(0x636f_6d70_6f73_6521);
        DigestKeyed {
            key: h.finish() | 1,
        }
    }
}

impl BuildHasher for DigestKeyed {
    type Hasher = DigestHasher;
    fn build_hasher(&self) -> DigestHasher {
        DigestHasher {
            key: self.key,
            state: 0,
        }
    }
}

struct DigestHasher {
    key: u64,
    state: u64,
}

impl Hasher for DigestHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        self.state = (self.state ^ u64::from_le_bytes(word)).wrapping_mul(self.key);
    }

    fn write_usize(&mut self, _: usize) {
        // The length prefix of a fixed-size key carries no information.
    }

    fn finish(&self) -> u64 {
        self.state ^ (self.state >> 29)
    }
}

/// Disjoint sets with path halving; the root of a set is its smallest index.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (low, high) = if a < b { (a, b) } else { (b, a) };
            self.parent[high] = low;
        }
    }
}
