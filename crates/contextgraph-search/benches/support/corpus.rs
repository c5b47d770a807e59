//! What the `freshness` and `load` benches share: copying a corpus, peak
//! RSS, milliseconds, medians, and the workspace options both open with.

use std::path::Path;
use std::time::Duration;

use contextgraph_search::{CacheLocation, WorkspaceOptions};

pub fn copy_tree(from: &Path, to: &Path, files: &mut usize) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let target = to.join(e.file_name());
        if ft.is_dir() {
            let _ = std::fs::create_dir_all(&target);
            copy_tree(&e.path(), &target, files);
        } else if ft.is_file() && std::fs::copy(e.path(), &target).is_ok() {
            *files += 1;
        }
    }
}

pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

pub fn options(cache: &Path) -> WorkspaceOptions {
    WorkspaceOptions {
        cache: CacheLocation::Base(cache.to_path_buf()),
        ..WorkspaceOptions::default()
    }
}
