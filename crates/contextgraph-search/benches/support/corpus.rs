//! What the `freshness` and `load` benches share: milliseconds, medians
//! and the workspace options both open with (copying a corpus and peak RSS
//! come from `contextgraph_testkit::corpus`).

use std::path::Path;
use std::time::Duration;

use contextgraph_search::{CacheLocation, WorkspaceOptions};
pub use contextgraph_testkit::corpus::{copy_tree, peak_rss_mib};

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
