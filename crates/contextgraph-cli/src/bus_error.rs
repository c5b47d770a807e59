//! A clear message instead of a silent death when a mapped index file is
//! truncated under us (N10).
//!
//! The workspace index maps saved snapshots over
//! `contextgraph_search::store::MAP_THRESHOLD` bytes (smaller ones are
//! copied and cannot fault). If another process truncates such a file in
//! place while `cgp` reads it, the kernel sends SIGBUS, which would kill
//! `cgp` with no word. The handler writes one fixed line to stderr (only
//! async-signal-safe calls) and exits with 70 (EX_SOFTWARE).

/// What the handler says.
const MESSAGE: &[u8] =
    b"cgp: the workspace index file was truncated in place by another process while cgp \
read it (SIGBUS); run the command again: a damaged index is detected and rebuilt from the files\n";

/// Install the SIGBUS handler (Unix).
#[cfg(unix)]
#[allow(unsafe_code)] // one signal handler, SAFETY below
pub fn report_bus_errors() {
    extern "C" fn on_sigbus(_signal: libc::c_int) {
        // SAFETY: write(2) and _exit(2) are async-signal-safe; MESSAGE is a
        // static buffer of the given length.
        unsafe {
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(70);
        }
    }
    // SAFETY: installs a handler that only makes async-signal-safe calls.
    unsafe {
        libc::signal(
            libc::SIGBUS,
            on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Nothing to install elsewhere.
#[cfg(not(unix))]
pub fn report_bus_errors() {}
