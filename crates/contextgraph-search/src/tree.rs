//! What the freshness check remembers about the working tree between two
//! refreshes: every directory the walk descended into, every file or
//! symlink it met (with the walk's verdict), and every file holding ignore
//! rules, each with the metadata seen last time ([`Stamp`]).
//!
//! With it, a check stats the known paths instead of walking the tree, and
//! lists only the directories whose own metadata changed: creating,
//! deleting or renaming an entry changes its directory's modification time,
//! editing a file in place changes the file's own size, modification time
//! or change time. Ignore rules are the exception that cannot be checked
//! locally (a rule in one file moves paths anywhere below it), so a changed
//! rules file sends the check back to a full walk.
//!
//! # Racy stamps
//!
//! File-system timestamps are coarse (a kernel tick, up to seconds on some
//! file systems): a change made in the same tick as the scan that recorded
//! a stamp can leave the stamp unchanged. A stamp whose modification or
//! change time is within [`RACY_WINDOW_NS`] of the scan that saw it is
//! therefore not kept ("must look again"), as git does for its index, so
//! such a path is re-listed or re-read by the next check until it settles.
//!
//! The tree is a hint, never the truth: it is persisted next to the index
//! (see [`crate::store`]) bound to the exact index files it describes, and
//! anything missing, unreadable or mismatched means one full walk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

// foldhash: seeded per process, much faster than SipHash on paths.
use foldhash::{HashMap, HashMapExt};

use crate::codec::{Reader, Writer};
use crate::walk::{SkipReason, PROJECT_IGNORE_FILE};

/// How close to the scan a timestamp may be and still be trusted: a stamp
/// within this window of the scan that saw it is looked at again next time
/// (2 s covers the coarsest common timestamps, FAT's, as well as a lagging
/// coarse kernel clock).
pub(crate) const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// The file names whose content changes which paths the walk admits
/// (`.gitignore`, `.ignore`, [`PROJECT_IGNORE_FILE`]).
pub(crate) const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", PROJECT_IGNORE_FILE];

/// The metadata a change to a path shows in: type, size, modification and
/// change times and inode. A content edit that restores size and
/// modification time still moves the change time; a file replaced by a
/// rename gets another inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    kind: u8,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: u64,
}

const KIND_FILE: u8 = 0;
const KIND_DIR: u8 = 1;
const KIND_SYMLINK: u8 = 2;
const KIND_OTHER: u8 = 3;

impl Stamp {
    /// The stamp of `meta` (from `symlink_metadata`: links are not followed).
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        let ft = meta.file_type();
        let kind = if ft.is_symlink() {
            KIND_SYMLINK
        } else if ft.is_dir() {
            KIND_DIR
        } else if ft.is_file() {
            KIND_FILE
        } else {
            KIND_OTHER
        };
        let mtime_ns = meta.modified().map_or(0, nanos);
        #[cfg(unix)]
        let (ctime_ns, ino) = {
            use std::os::unix::fs::MetadataExt;
            (
                meta.ctime()
                    .saturating_mul(1_000_000_000)
                    .saturating_add(meta.ctime_nsec()),
                meta.ino(),
            )
        };
        #[cfg(not(unix))]
        let (ctime_ns, ino) = (meta.created().map_or(0, nanos), 0);
        Stamp {
            kind,
            size: meta.len(),
            mtime_ns,
            ctime_ns,
            ino,
        }
    }

    /// The stamp of a `stat` result: the same as [`Stamp::of`] its metadata.
    #[cfg(target_os = "linux")]
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // widths vary by target
    pub(crate) fn of_stat(st: &rustix::fs::Stat) -> Stamp {
        let kind = match rustix::fs::FileType::from_raw_mode(st.st_mode as _) {
            rustix::fs::FileType::Symlink => KIND_SYMLINK,
            rustix::fs::FileType::Directory => KIND_DIR,
            rustix::fs::FileType::RegularFile => KIND_FILE,
            _ => KIND_OTHER,
        };
        let ns = |secs: i64, nsec: i64| secs.saturating_mul(1_000_000_000).saturating_add(nsec);
        Stamp {
            kind,
            size: st.st_size as u64,
            mtime_ns: ns(st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime_ns: ns(st.st_ctime as i64, st.st_ctime_nsec as i64),
            ino: st.st_ino as u64,
        }
    }

    /// The stamp of the path now, `None` when it does not exist or cannot be read.
    pub(crate) fn at(path: &Path) -> Option<Stamp> {
        std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
    }

    /// `self` when it is old enough to be trusted by a scan that started at
    /// `scan_start_ns` (see the module docs), else `None` (look again).
    pub(crate) fn settled(self, scan_start_ns: i64) -> Option<Stamp> {
        let limit = scan_start_ns.saturating_sub(RACY_WINDOW_NS);
        (self.mtime_ns < limit && self.ctime_ns < limit).then_some(self)
    }

    /// Size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Modification time, nanoseconds since the epoch.
    pub(crate) fn mtime_ns(&self) -> i64 {
        self.mtime_ns
    }

    /// Modification time.
    pub(crate) fn modified(&self) -> SystemTime {
        let magnitude = std::time::Duration::from_nanos(self.mtime_ns.unsigned_abs());
        let time = if self.mtime_ns >= 0 {
            UNIX_EPOCH.checked_add(magnitude)
        } else {
            UNIX_EPOCH.checked_sub(magnitude)
        };
        time.unwrap_or(UNIX_EPOCH)
    }

    /// Whether this is a directory.
    pub(crate) fn is_dir(&self) -> bool {
        self.kind == KIND_DIR
    }

    fn write(&self, w: &mut Writer) {
        w.u8(self.kind);
        w.u64(self.size);
        w.i64(self.mtime_ns);
        w.i64(self.ctime_ns);
        w.u64(self.ino);
    }

    fn read(r: &mut Reader<'_>) -> Option<Stamp> {
        Some(Stamp {
            kind: r.u8()?,
            size: r.u64()?,
            mtime_ns: r.i64()?,
            ctime_ns: r.i64()?,
            ino: r.u64()?,
        })
    }
}

/// Nanoseconds since the epoch (negative before it), saturating.
pub(crate) fn nanos(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// One file or symlink the walk met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KnownFile {
    /// Its metadata when last judged; `None`: it changed and was not
    /// re-indexed yet (a deadline cut the refresh short).
    pub(crate) stamp: Option<Stamp>,
    /// Whether the stamp was settled when seen; an unsettled one may hide a
    /// later change in the same timestamp tick, so the file is read once
    /// more ([`Freshness::Verify`]).
    pub(crate) settled: bool,
    /// The walk's verdict: `None` admitted (the index holds it), else why
    /// it was left out before reading.
    pub(crate) skipped: Option<SkipReason>,
}

/// What a file's stamp now says about the index's copy of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// Unchanged since it was indexed.
    Same,
    /// The same stamp, but seen too close to a change to trust it: read it
    /// again (without reporting it as changed if a deadline prevents that).
    Verify,
    /// Changed (or not re-indexed after a change): re-judge and read it.
    Changed,
}

impl KnownFile {
    /// A file seen as `now` by a scan started at `scan_start_ns`.
    pub(crate) fn seen(
        now: Option<Stamp>,
        scan_start_ns: i64,
        skipped: Option<SkipReason>,
    ) -> KnownFile {
        KnownFile {
            stamp: now,
            settled: now.is_some_and(|s| s.settled(scan_start_ns).is_some()),
            skipped,
        }
    }

    /// How the file as `now` compares with what was remembered.
    pub(crate) fn freshness(&self, now: Option<Stamp>) -> Freshness {
        match (self.stamp, now) {
            (Some(s), Some(n)) if s == n && self.settled => Freshness::Same,
            (Some(s), Some(n)) if s == n => Freshness::Verify,
            _ => Freshness::Changed,
        }
    }
}

/// The remembered tree (see the module docs). Paths are `/`-separated and
/// relative to the root (the root directory itself is `""`), except the
/// rules files, which may lie above the root and are absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tree {
    /// Directories descended into; `None`: re-list next time. Ordered, as
    /// the files are, so that a check visits a directory's files together.
    pub(crate) dirs: BTreeMap<String, Option<Stamp>>,
    /// Files and symlinks met.
    pub(crate) files: BTreeMap<String, KnownFile>,
    /// Files holding ignore rules (or whose appearance would add some).
    pub(crate) rules: HashMap<PathBuf, RulesFile>,
    /// The walk options the verdicts were reached under (size cap, secrets
    /// included): other options, other verdicts, so a full walk.
    pub(crate) walk: (u64, bool),
}

/// What a check expects of one rules file; anything else means a full walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RulesFile {
    /// It does not exist.
    Absent,
    /// It exists with this settled stamp.
    Seen(Stamp),
    /// It changed too recently to trust: the next check walks in full.
    Unsettled,
}

impl RulesFile {
    /// The expectation for a rules file seen as `now` by a scan started at
    /// `scan_start_ns`.
    pub(crate) fn observed(now: Option<Stamp>, scan_start_ns: i64) -> RulesFile {
        match now {
            None => RulesFile::Absent,
            Some(s) => s
                .settled(scan_start_ns)
                .map_or(RulesFile::Unsettled, RulesFile::Seen),
        }
    }

    /// Whether the file as `now` still meets the expectation.
    pub(crate) fn holds(&self, now: Option<Stamp>) -> bool {
        match (self, now) {
            (RulesFile::Absent, None) => true,
            (RulesFile::Seen(s), Some(n)) => *s == n,
            _ => false,
        }
    }
}

impl Tree {
    /// The rules files that are not inside a remembered directory, so whose
    /// appearance no directory stamp would reveal: ignore files in the
    /// root's parents, `.git/info/exclude` of the root and its parents, and
    /// the user's global git configuration and excludes file.
    pub(crate) fn outer_rules_files(root: &Path) -> Vec<PathBuf> {
        let mut out = vec![root.join(".git").join("info").join("exclude")];
        for parent in root.ancestors().skip(1) {
            for name in IGNORE_FILE_NAMES {
                out.push(parent.join(name));
            }
            out.push(parent.join(".git").join("info").join("exclude"));
        }
        let home = std::env::var_os("HOME").filter(|v| !v.is_empty());
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| PathBuf::from(h).join(".config")));
        if let Some(home) = home {
            out.push(PathBuf::from(home).join(".gitconfig"));
        }
        if let Some(config) = config {
            out.push(config.join("git").join("config"));
            out.push(config.join("git").join("ignore"));
        }
        out
    }

    /// Remember the ignore files present in directory `dir` (absolute).
    pub(crate) fn note_ignore_files_in(&mut self, dir: &Path, scan_start_ns: i64) {
        for name in IGNORE_FILE_NAMES {
            let path = dir.join(name);
            if let Some(stamp) = Stamp::at(&path) {
                self.rules
                    .insert(path, RulesFile::observed(Some(stamp), scan_start_ns));
            }
        }
    }

    /// Encode (the persisted form, after the store's header).
    pub(crate) fn encode(&self, w: &mut Writer) {
        let write_stamp = write_opt_stamp;
        w.u64(self.walk.0);
        w.u8(u8::from(self.walk.1));
        w.len(self.dirs.len());
        for (path, stamp) in &self.dirs {
            w.str(path);
            write_stamp(w, stamp);
        }
        w.len(self.files.len());
        for (path, known) in &self.files {
            w.str(path);
            write_stamp(w, &known.stamp);
            w.u8(u8::from(known.settled));
            w.u8(known.skipped.map_or(0, skip_code));
        }
        w.len(self.rules.len());
        for (path, rules) in &self.rules {
            w.str(&path.to_string_lossy());
            match rules {
                RulesFile::Absent => w.u8(0),
                RulesFile::Seen(s) => {
                    w.u8(1);
                    s.write(w);
                }
                RulesFile::Unsettled => w.u8(2),
            }
        }
    }

    /// Decode what [`encode`](Self::encode) wrote; `None` on any inconsistency.
    pub(crate) fn decode(r: &mut Reader<'_>) -> Option<Tree> {
        let read_stamp = read_opt_stamp;
        let walk = match (r.u64()?, r.u8()?) {
            (cap, 0) => (cap, false),
            (cap, 1) => (cap, true),
            _ => return None,
        };
        // Every entry takes more than 4 bytes: bounds the reservation (not
        // the count) so a corrupt count cannot drive a large allocation.
        // Written in order, so the maps are built in bulk.
        let n = r.len_prefix()?;
        let mut dirs = Vec::with_capacity(n.min(r.remaining() / 4));
        for _ in 0..n {
            let path = r.string()?;
            dirs.push((path, read_stamp(r)?));
        }
        let n = r.len_prefix()?;
        let mut files = Vec::with_capacity(n.min(r.remaining() / 4));
        for _ in 0..n {
            let path = r.string()?;
            let stamp = read_stamp(r)?;
            let settled = match r.u8()? {
                0 => false,
                1 => true,
                _ => return None,
            };
            let skipped = match r.u8()? {
                0 => None,
                code => Some(*SkipReason::ALL.get(usize::from(code) - 1)?),
            };
            files.push((
                path,
                KnownFile {
                    stamp,
                    settled,
                    skipped,
                },
            ));
        }
        let n = r.len_prefix()?;
        let mut rules = HashMap::with_capacity(n.min(r.remaining() / 4));
        for _ in 0..n {
            let path = PathBuf::from(r.string()?);
            let expected = match r.u8()? {
                0 => RulesFile::Absent,
                1 => RulesFile::Seen(Stamp::read(r)?),
                2 => RulesFile::Unsettled,
                _ => return None,
            };
            rules.insert(path, expected);
        }
        let (dirs, files) = (BTreeMap::from_iter(dirs), BTreeMap::from_iter(files));
        r.is_empty().then_some(Tree {
            dirs,
            files,
            rules,
            walk,
        })
    }
}

/// An optional stamp: a presence byte, then the stamp.
pub(crate) fn write_opt_stamp(w: &mut Writer, stamp: &Option<Stamp>) {
    match stamp {
        Some(s) => {
            w.u8(1);
            s.write(w);
        }
        None => w.u8(0),
    }
}

/// What [`write_opt_stamp`] wrote.
pub(crate) fn read_opt_stamp(r: &mut Reader<'_>) -> Option<Option<Stamp>> {
    match r.u8()? {
        0 => Some(None),
        1 => Some(Some(Stamp::read(r)?)),
        _ => None,
    }
}

fn skip_code(reason: SkipReason) -> u8 {
    SkipReason::ALL
        .iter()
        .position(|r| *r == reason)
        .map_or(0, |i| i as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_round_trips_and_rejects_truncation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").expect("write");
        let stamp = Stamp::at(&file).expect("stamp");
        let mut tree = Tree {
            walk: (1 << 20, true),
            ..Tree::default()
        };
        tree.dirs.insert(String::new(), Some(stamp));
        tree.dirs.insert("src".into(), None);
        tree.files.insert(
            "a.txt".into(),
            KnownFile {
                stamp: Some(stamp),
                settled: true,
                skipped: None,
            },
        );
        tree.files.insert(
            "big.bin".into(),
            KnownFile {
                stamp: None,
                settled: false,
                skipped: Some(SkipReason::Binary),
            },
        );
        tree.rules
            .insert(dir.path().join(".gitignore"), RulesFile::Absent);
        tree.rules
            .insert(dir.path().join(".ignore"), RulesFile::Seen(stamp));
        tree.rules
            .insert(dir.path().join(".cgpignore"), RulesFile::Unsettled);
        let mut w = Writer::default();
        tree.encode(&mut w);
        assert_eq!(Tree::decode(&mut Reader::new(&w.buf)), Some(tree));
        for cut in 0..w.buf.len() {
            assert_eq!(Tree::decode(&mut Reader::new(&w.buf[..cut])), None, "{cut}");
        }
    }

    #[test]
    fn a_stamp_from_this_instant_is_not_settled_and_an_old_one_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").expect("write");
        let stamp = Stamp::at(&file).expect("stamp");
        let now = nanos(SystemTime::now());
        assert_eq!(stamp.settled(now), None);
        assert_eq!(stamp.settled(now + 10 * RACY_WINDOW_NS), Some(stamp));
    }
}
