//! File ownership for discovery, in the spirit of git's
//! `safe.directory`: a `cgp.toml` that another user owns, or that sits in
//! a directory another user owns (who could swap it), is not read. Files
//! owned by root are system files and allowed.

use std::path::Path;

/// The uid of whoever other than this user (or root) owns `file` or its
/// directory, if anyone does. Unreadable metadata counts as no objection:
/// such a file cannot be read either, and reading it reports the error.
#[cfg(unix)]
#[allow(unsafe_code)] // the crate denies unsafe code; this is its one exception (SAFETY below)
pub(crate) fn foreign_owner(file: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let foreign = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| m.uid())
            .filter(|uid| *uid != me && *uid != 0)
    };
    foreign(file).or_else(|| file.parent().and_then(foreign))
}

/// Ownership is a Unix notion; elsewhere nothing is foreign.
#[cfg(not(unix))]
pub(crate) fn foreign_owner(_file: &Path) -> Option<u32> {
    None
}
