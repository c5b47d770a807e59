//! A real pseudo-terminal for tests that need `cgp` to see a terminal.

use std::ffi::CStr;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;

/// A pseudo-terminal pair.
pub struct Pty {
    /// The side the test reads and types on.
    pub master: File,
    /// The side the program under test gets as its terminal.
    pub slave: File,
}

// The crate denies unsafe code; this is its one exception (see SAFETY below).
#[allow(unsafe_code)]
pub fn open_pty() -> Pty {
    // SAFETY: plain POSIX calls on a descriptor we own; each result is checked,
    // and the name buffer is NUL-terminated by ptsname_r on success.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = File::from_raw_fd(fd);
        assert_eq!(libc::grantpt(fd), 0, "grantpt");
        assert_eq!(libc::unlockpt(fd), 0, "unlockpt");
        let mut name = [0 as libc::c_char; 256];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let path = CStr::from_ptr(name.as_ptr()).to_str().unwrap().to_owned();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
            .unwrap_or_else(|e| panic!("open {path}: {e}"));
        Pty { master, slave }
    }
}

impl Pty {
    /// Give the terminal `columns` × `rows`, as a terminal window would.
    #[allow(unsafe_code)]
    pub fn set_size(&self, columns: u16, rows: u16) {
        let size = libc::winsize {
            ws_row: rows,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads one `winsize` from a live local; the
        // descriptor is the master we own.
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }
}
