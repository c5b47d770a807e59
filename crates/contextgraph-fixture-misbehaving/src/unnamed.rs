//! Files with no name in any folder: where the built-in corpus lives on
//! Linux, so the provider leaves nothing behind however it ends.
//!
//! A checker must be able to re-read every file a frame's provenance names
//! (F5), so the corpus cannot live in memory alone; but a scratch folder
//! outlives a provider that is killed (SIGKILL runs no clean-up code, and
//! 170 folders once piled up in a day of testing). An *unnamed* file is
//! created with no directory entry at all (`O_TMPFILE`, or created and
//! unlinked at once where the file system lacks it) and exists exactly as
//! long as a descriptor to it is open. Linux exposes each open descriptor as
//! `/proc/<pid>/fd/<n>`, which any process of the same user can open and
//! read, so that path is the file's URI. When the provider exits, by any
//! means, the kernel closes the descriptor and the bytes are gone; there is
//! no folder to delete and no signal to catch.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// An open unnamed file holding `text`, on the file system of `dir` (the
/// temporary folder, for the built-in corpus), and the path other processes
/// (and this one) open it by while this process keeps it open.
pub fn unnamed_file(dir: &Path, text: &str) -> io::Result<(File, PathBuf)> {
    let mut file = tempfile::tempfile_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    let path = PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        file.as_raw_fd()
    ));
    Ok((file, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unnamed_file_is_readable_by_its_proc_path_and_has_no_name() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = unnamed_file(dir.path(), "line one\nline two\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"line one\nline two\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        drop(file);
        assert!(std::fs::read(&path).is_err(), "closed: the bytes are gone");
    }
}
