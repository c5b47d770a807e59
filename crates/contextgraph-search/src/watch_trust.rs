//! When a long-running server may answer without scanning the tree first.
//!
//! A server that runs a file watcher ([`Workspace::watch`](crate::Workspace::watch)) re-indexes
//! changes as they happen, so the metadata scan before each answer
//! ([`Workspace::refresh_within`](crate::Workspace::refresh_within)) usually finds nothing, yet costs one
//! `lstat` per known file: most of a query's time on a large tree. The scan
//! may be skipped ([`Workspace::refresh_for_query`](crate::Workspace::refresh_for_query)) only while the watcher
//! is *demonstrably* keeping up:
//!
//! - it started, and a refresh has completed since (events before the
//!   watch began are that refresh's to find);
//! - no change event has arrived since the last completed refresh began
//!   (a change the watcher has seen but not yet re-indexed: scan now);
//! - it has reported no failure: an event queue overflow (inotify's
//!   `IN_Q_OVERFLOW`, notify's `Rescan` flag) forces a scan until the next
//!   refresh completes; a watch error (the watch limit reached for a new
//!   directory, a dropped watch) distrusts it for the life of the process;
//! - the tree is not on a file system whose change events are unreliable
//!   (NFS, SMB/CIFS, FUSE, 9p, AFS, Ceph, Coda: other machines' writes send
//!   no event here);
//! - no refresh has found a change the watcher never announced: a file
//!   whose new modification time is more than [`MISSED_MARGIN`] before the
//!   refresh began, on no path an event named (a write through a hard link
//!   outside the tree, a bind mount, a file system that drops events). One
//!   such change distrusts the watcher for the life of the process, said
//!   once on stderr;
//! - `CGP_WATCH_TRUST=0` is not set (it keeps the scan before every answer,
//!   for a file system you doubt or to measure the difference).
//!
//! Whatever the rule decides, an answer never serves a file's old bytes as
//! current: every frame's region is checked against the file's bytes as
//! they are when the answer is made, and a region that no longer matches is
//! not served. The periodic background refresh (`--refresh-secs`) still
//! runs, and is what catches a change no event announced.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Environment switch: `0` keeps the scan before every answer even with a
/// healthy watcher.
pub const WATCH_TRUST_VAR: &str = "CGP_WATCH_TRUST";

/// How long before a refresh began a change must be, for a refresh that
/// finds it unannounced to blame the watcher (a change made just before
/// the refresh may still have its event on the way).
pub const MISSED_MARGIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Most distinct paths remembered between two refreshes; past it, every
/// path counts as announced (a checkout's burst is not a watcher failure).
const MAX_ANNOUNCED: usize = 65_536;

/// Why the scan before an answer cannot be skipped now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanNeeded {
    /// No watcher runs for this workspace.
    NoWatcher,
    /// `CGP_WATCH_TRUST=0`.
    Disabled,
    /// No refresh has completed since the watcher started.
    NotYetRefreshed,
    /// A change event arrived since the last completed refresh began.
    ChangesPending,
    /// The watcher's event queue overflowed (events were lost).
    Overflowed,
    /// The watcher cannot be trusted for the rest of the process: it
    /// reported an error, sits on an unreliable file system, or missed a
    /// change. The text says which.
    Distrusted(String),
}

/// What the watcher has said, shared between its callback, the refreshes
/// and the queries.
#[derive(Debug)]
pub(crate) struct WatchTrust {
    /// Relevant events seen (each bumps it; a refresh records the value it
    /// began at).
    events: AtomicU64,
    /// `events` when the last completed refresh began, plus one (0: none
    /// has completed since the watch began).
    settled: AtomicU64,
    /// An overflow since the last completed refresh began.
    overflowed: AtomicBool,
    /// Set once, never cleared: why the watcher is not trusted.
    distrust: Mutex<Option<String>>,
    /// Paths (relative to the root, `/`-separated) named by events since
    /// the last completed refresh, with the event count when each was last
    /// named; `None` once more than [`MAX_ANNOUNCED`] were named.
    announced: Mutex<Option<HashMap<String, u64>>>,
    /// `CGP_WATCH_TRUST=0` was set when the watch began.
    disabled: bool,
}

impl WatchTrust {
    /// The state of a watcher that has just started on `root`.
    pub(crate) fn new(root: &Path) -> WatchTrust {
        let trust = WatchTrust {
            events: AtomicU64::new(0),
            settled: AtomicU64::new(0),
            overflowed: AtomicBool::new(false),
            distrust: Mutex::new(None),
            announced: Mutex::new(Some(HashMap::new())),
            disabled: std::env::var(WATCH_TRUST_VAR).as_deref() == Ok("0"),
        };
        if let Some(fs) = unreliable_file_system(root) {
            trust.distrust_because(format!(
                "{} is on {fs}, whose change events miss other machines' writes",
                root.display()
            ));
        }
        trust
    }

    /// A change event naming `paths` (relative to the root).
    pub(crate) fn saw_change<'a>(&self, paths: impl IntoIterator<Item = &'a str>) {
        let seq = self.events.fetch_add(1, Ordering::SeqCst) + 1;
        let mut announced = self.announced.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(map) = announced.as_mut() {
            for p in paths {
                map.insert(p.to_owned(), seq);
            }
            if map.len() > MAX_ANNOUNCED {
                *announced = None;
            }
        }
    }

    /// The event queue overflowed: events were lost, so the next answer
    /// scans and so does every one until a refresh completes.
    pub(crate) fn overflowed(&self) {
        self.overflowed.store(true, Ordering::SeqCst);
        self.events.fetch_add(1, Ordering::SeqCst);
        *self.announced.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Stop trusting the watcher for the rest of the process; the first
    /// reason is kept (and said once on stderr).
    pub(crate) fn distrust_because(&self, why: String) {
        let mut slot = self.distrust.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("workspace: answers re-check the whole tree from now on: {why}\n")
                    .as_bytes(),
            );
            *slot = Some(why);
        }
    }

    /// The event count a refresh beginning now covers.
    pub(crate) fn refresh_begins(&self) -> u64 {
        self.events.load(Ordering::SeqCst)
    }

    /// A refresh that began at event count `began` (and at `began_ns`, wall
    /// clock) has completed, having found `changed` (relative path, new
    /// modification time in ns) new or changed.
    pub(crate) fn refresh_completed(&self, began: u64, began_ns: i128, changed: &[(String, i128)]) {
        let margin = MISSED_MARGIN.as_nanos() as i128;
        {
            let mut announced = self.announced.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(map) = announced.as_ref() {
                let missed = changed
                    .iter()
                    .find(|(rel, mtime)| *mtime < began_ns - margin && !announced_path(map, rel));
                if let Some((rel, _)) = missed {
                    let why = format!(
                        "the file watcher never announced a change to {rel} (a write through a \
                         hard link or another mount, or a file system that drops events)"
                    );
                    drop(announced);
                    self.distrust_because(why);
                    announced = self.announced.lock().unwrap_or_else(|p| p.into_inner());
                }
            }
            match announced.as_mut() {
                Some(map) => map.retain(|_, seq| *seq > began),
                // Forgotten past the cap: start remembering again.
                None => *announced = Some(HashMap::new()),
            }
        }
        if self.events.load(Ordering::SeqCst) == began {
            self.overflowed.store(false, Ordering::SeqCst);
        }
        self.settled.fetch_max(began + 1, Ordering::SeqCst);
    }

    /// Whether the scan before an answer may be skipped now.
    pub(crate) fn scan_needed(&self) -> Option<ScanNeeded> {
        if self.disabled {
            return Some(ScanNeeded::Disabled);
        }
        if let Some(why) = self
            .distrust
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Some(ScanNeeded::Distrusted(why));
        }
        if self.overflowed.load(Ordering::SeqCst) {
            return Some(ScanNeeded::Overflowed);
        }
        let settled = self.settled.load(Ordering::SeqCst);
        if settled == 0 {
            return Some(ScanNeeded::NotYetRefreshed);
        }
        if self.events.load(Ordering::SeqCst) + 1 != settled {
            return Some(ScanNeeded::ChangesPending);
        }
        None
    }
}

/// Whether `rel` or a directory above it was named by an event (a renamed
/// or created directory's event names the directory, not its files).
fn announced_path(map: &HashMap<String, u64>, rel: &str) -> bool {
    let mut cur = rel;
    loop {
        if map.contains_key(cur) {
            return true;
        }
        match cur.rfind('/') {
            Some(i) => cur = &cur[..i],
            None => return map.contains_key(""),
        }
    }
}

/// The name of the network or user-space file system `root` is on, when
/// its change events cannot be relied on; `None` for a local one (or where
/// it cannot be told).
#[cfg(target_os = "linux")]
fn unreliable_file_system(root: &Path) -> Option<&'static str> {
    let stat = rustix::fs::statfs(root).ok()?;
    // The kernel's magic numbers (linux/magic.h and the file systems' own).
    #[allow(clippy::unnecessary_cast)]
    let magic = stat.f_type as i64 as u32;
    Some(match magic {
        0x6969 => "NFS",
        0x517B => "SMB",
        0xFF53_4D42 => "CIFS",
        0xFE53_4D42 => "SMB2",
        0x6573_5546 => "a FUSE file system",
        0x0102_1997 => "9p",
        0x5346_414F => "AFS",
        0x6B41_4653 => "AFS",
        0x00C3_6400 => "Ceph",
        0x7375_7245 => "Coda",
        _ => return None,
    })
}

#[cfg(not(target_os = "linux"))]
fn unreliable_file_system(_root: &Path) -> Option<&'static str> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started() -> WatchTrust {
        let dir = tempfile::tempdir().unwrap();
        let t = WatchTrust::new(dir.path());
        assert_eq!(t.scan_needed(), Some(ScanNeeded::NotYetRefreshed));
        let began = t.refresh_begins();
        t.refresh_completed(began, 0, &[]);
        t
    }

    #[test]
    fn quiet_after_a_refresh_and_pending_after_an_event() {
        let t = started();
        assert_eq!(t.scan_needed(), None);
        t.saw_change(["src/a.rs"]);
        assert_eq!(t.scan_needed(), Some(ScanNeeded::ChangesPending));
        let began = t.refresh_begins();
        // An event during the refresh is not covered by it.
        t.saw_change(["src/b.rs"]);
        t.refresh_completed(began, 0, &[]);
        assert_eq!(t.scan_needed(), Some(ScanNeeded::ChangesPending));
        let began = t.refresh_begins();
        t.refresh_completed(began, 0, &[]);
        assert_eq!(t.scan_needed(), None);
    }

    #[test]
    fn an_overflow_scans_until_a_refresh_completes() {
        let t = started();
        t.overflowed();
        assert_eq!(t.scan_needed(), Some(ScanNeeded::Overflowed));
        let began = t.refresh_begins();
        t.refresh_completed(began, 0, &[]);
        assert_eq!(t.scan_needed(), None);
    }

    #[test]
    fn an_unannounced_old_change_distrusts_the_watcher_for_good() {
        let t = started();
        let now: i128 = 100_000_000_000;
        let old = now - 10_000_000_000;
        // Announced (by its directory): fine.
        t.saw_change(["src"]);
        let began = t.refresh_begins();
        t.refresh_completed(began, now, &[("src/a.rs".into(), old)]);
        assert_eq!(t.scan_needed(), None);
        // Unannounced but recent (its event may be on the way): fine.
        let began = t.refresh_begins();
        t.refresh_completed(began, now, &[("lib/b.rs".into(), now - 1_000)]);
        assert_eq!(t.scan_needed(), None);
        // Unannounced and old: the watcher missed it.
        let began = t.refresh_begins();
        t.refresh_completed(began, now, &[("lib/b.rs".into(), old)]);
        assert!(
            matches!(t.scan_needed(), Some(ScanNeeded::Distrusted(ref w)) if w.contains("lib/b.rs")),
            "{:?}",
            t.scan_needed()
        );
        let began = t.refresh_begins();
        t.refresh_completed(began, now, &[]);
        assert!(matches!(t.scan_needed(), Some(ScanNeeded::Distrusted(_))));
    }

    #[test]
    fn a_directory_event_announces_the_files_under_it_only() {
        let mut map = HashMap::new();
        map.insert("src/net".to_owned(), 1);
        assert!(announced_path(&map, "src/net/a.rs"));
        assert!(announced_path(&map, "src/net"));
        assert!(!announced_path(&map, "src/network.rs"));
        assert!(!announced_path(&map, "src/a.rs"));
    }
}
