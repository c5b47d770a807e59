//! Writing a file the user named (`--html PATH`) without being turned
//! against them.
//!
//! The old way — `.NAME.PID.tmp` written with a symlink-following write,
//! then renamed over PATH — could be aimed: a temp name planted as a
//! symlink made cgp overwrite the file it pointed to, and the rename
//! replaced whatever PATH was (as root it turned `/dev/full` into a
//! regular file; a FIFO or a symlink at PATH was silently replaced).
//!
//! Here, by what PATH is:
//! - nothing, or a regular file: the bytes go to a new temp file in the
//!   same directory, created exclusively (never through an existing name
//!   or symlink) under an unpredictable name, then renamed into place — a
//!   reader never sees half a report;
//! - a FIFO, character or block device, or socket the user named: written
//!   to directly, never replaced;
//! - a symlink to one of those: written through (`/dev/stdout` is one);
//! - a symlink to anything else (a file, nothing): refused, naming where
//!   it points — replacing the link or writing the file behind it silently
//!   is what a planted link wants;
//! - a directory: refused.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why a report could not be written, saying what to do.
#[derive(Debug, thiserror::Error)]
pub enum SafeWriteError {
    /// PATH is a symlink to a regular file or to nothing.
    #[error("{} is a symbolic link (to {}); cgp does not write through or replace a link to a file: give the real path, or remove the link", .path.display(), .target.display())]
    Symlink {
        /// The link.
        path: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// PATH is a directory.
    #[error("{} is a directory; give a file name", .0.display())]
    Directory(PathBuf),
    /// The OS refused.
    #[error("{}: {source}; check that the directory exists and is writable", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// Write `bytes` to `path` as described in the module documentation.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), SafeWriteError> {
    let io_err = |source| SafeWriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => replace(path, bytes).map_err(io_err),
        Err(e) => Err(io_err(e)),
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = std::fs::read_link(path).unwrap_or_default();
            match std::fs::metadata(path) {
                Ok(m) if is_special(&m) => write_special(path, bytes, true).map_err(io_err),
                Ok(m) if m.is_dir() => Err(SafeWriteError::Directory(path.to_path_buf())),
                _ => Err(SafeWriteError::Symlink {
                    path: path.to_path_buf(),
                    target,
                }),
            }
        }
        Ok(meta) if meta.is_dir() => Err(SafeWriteError::Directory(path.to_path_buf())),
        Ok(meta) if meta.is_file() => replace(path, bytes).map_err(io_err),
        Ok(_) => write_special(path, bytes, false).map_err(io_err),
    }
}

/// A FIFO, device or socket: something written to, not a file to replace.
fn is_special(meta: &std::fs::Metadata) -> bool {
    !meta.is_file() && !meta.is_dir()
}

/// Write straight into a FIFO or device. Without `follow`, a symlink
/// swapped in since it was looked at is not followed (`O_NOFOLLOW`).
fn write_special(path: &Path, bytes: &[u8], follow: bool) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    if !follow {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    }
    let mut file = options.open(path)?;
    // Only what was opened is written to: if it is a regular file now
    // (swapped in meanwhile), it would be clobbered, so stop.
    if file.metadata()?.is_file() {
        return Err(io::Error::other(
            "it became a regular file while being written; run again",
        ));
    }
    file.write_all(bytes)?;
    file.flush()
}

/// A new file in `path`'s directory, renamed over `path`.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".to_owned());
    let (tmp, mut file) = create_temp(dir, &name)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            // The target may have changed while writing: never rename over
            // anything but a regular file (or nothing).
            match std::fs::symlink_metadata(path) {
                Ok(m) if !m.is_file() => Err(io::Error::other(
                    "it was replaced by something that is not a regular file while being written; run again",
                )),
                _ => std::fs::rename(&tmp, path),
            }
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// An exclusively created (`O_CREAT|O_EXCL`: never an existing name,
/// never through a symlink) temp file with an unpredictable name.
fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for attempt in 0..16u32 {
        let tmp = dir.join(format!(".{name}.{}.tmp", random_suffix(attempt)));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// 64 bits no other process can predict: the standard library's hasher
/// keys come from the OS's random source.
fn random_suffix(attempt: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_replaced_and_no_temp_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.html");
        write_file(&path, b"one").unwrap();
        write_file(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_symlink_to_a_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("r.html");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = write_file(&link, b"x").unwrap_err();
        assert!(matches!(err, SafeWriteError::Symlink { .. }), "{err}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(matches!(
            write_file(dir.path(), b"x").unwrap_err(),
            SafeWriteError::Directory(_)
        ));
    }

    #[test]
    fn temp_names_differ_between_calls() {
        assert_ne!(random_suffix(0), random_suffix(0));
    }
}
