//! Corpora for benchmarks: copying a tree of real files into a scratch
//! workspace, and the process's peak memory. The search, workspace-provider
//! and engine benches measure on such copies (the corpus must not change
//! under a measurement, and an index must not be written beside the
//! original), so the copying lives here once.

use std::path::Path;

/// Copy every regular file under `from` into `to` (directories created as
/// needed; symbolic links and unreadable entries skipped). Returns the
/// files and bytes copied.
pub fn copy_tree(from: &Path, to: &Path) -> (usize, u64) {
    let mut copied = (0, 0);
    copy_tree_into(from, to, &mut copied);
    copied
}

fn copy_tree_into(from: &Path, to: &Path, copied: &mut (usize, u64)) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let target = to.join(e.file_name());
        if ft.is_dir() {
            let _ = std::fs::create_dir_all(&target);
            copy_tree_into(&e.path(), &target, copied);
        } else if ft.is_file() {
            if let Ok(n) = std::fs::copy(e.path(), &target) {
                copied.0 += 1;
                copied.1 += n;
            }
        }
    }
}

/// Copy this repository's Rust sources (`crates/*/src/**/*.rs`, no tests,
/// fixtures or build output) from the checkout at `repo` into `ws`,
/// keeping their paths under `crates/`, and mark `ws` as a repository root
/// (an empty `.git`). A corpus of real code the benches of sessions and
/// `verify` edit between turns. Panics on an I/O error: benches only.
pub fn copy_rust_sources(repo: &Path, ws: &Path) {
    let crates = repo.join("crates");
    let mut stack = vec![crates.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if p.is_dir() && name != "target" && name != "fixtures" && name != "tests" {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && p.components().any(|c| c.as_os_str() == "src")
            {
                let rel = p.strip_prefix(&crates).expect("under crates");
                let to = ws.join(rel);
                std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
                std::fs::copy(&p, &to).expect("copy");
            }
        }
    }
    std::fs::create_dir_all(ws.join(".git")).expect(".git");
}

/// This process's peak resident memory in MiB (`VmHWM`; 0 where
/// `/proc/self/status` is not available).
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_files_and_counts_them() {
        let from = tempfile::tempdir().expect("from");
        std::fs::create_dir_all(from.path().join("a/b")).expect("mkdir");
        std::fs::write(from.path().join("a/b/x.rs"), "fn x() {}\n").expect("write");
        std::fs::write(from.path().join("y.txt"), "yy").expect("write");
        let to = tempfile::tempdir().expect("to");
        assert_eq!(copy_tree(from.path(), to.path()), (2, 12));
        assert_eq!(
            std::fs::read_to_string(to.path().join("a/b/x.rs")).expect("copied"),
            "fn x() {}\n"
        );
    }
}
